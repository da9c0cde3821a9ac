// One HTTP request as bench saw it: what was asked, when each streamed chunk
// arrived and what the server's `usage` said. Every mode produces these, they
// are appended to requests.jsonl as they finish, and every number in a report
// is recomputed from them (that is what makes resume and `bench report` work).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace llmesh::bench {

struct RequestRecord {
  std::string point_key;        // the point (mode + parameters) this request belongs to
  std::string role;             // "warmup", "measured", "background", "injected", "p_cold", "session", ...
  int64_t index = 0;            // order within (point, role)
  std::string session_id;       // agent sessions and trace replay; "" otherwise
  int64_t turn = -1;            // agent sessions and trace replay
  double depth = -1;            // needle: where the fact sits (0 = start, 1 = end)
  int64_t context_tokens = -1;  // needle: the context length asked for
  std::string expected_text;    // needle: the answer the text must contain

  // Times in seconds. send_s counts from the run's start (monotonic clock);
  // the others count from this request's send.
  double send_s = 0;
  double first_token_s = -1;    // first chunk carrying generated text; -1 when none came
  double end_s = 0;             // last byte of the response (E2E)
  std::vector<double> chunk_s;  // every chunk that carried generated text

  int64_t expected_prompt_tokens = -1;  // -1: not fixed by the mode
  int64_t expected_output_tokens = -1;
  int64_t prompt_tokens = -1;  // from usage; -1 when the server did not say
  int64_t completion_tokens = -1;
  int64_t cached_tokens = -1;
  int64_t previous_prompt_tokens = -1;  // sessions: the session's previous prompt length

  bool ok = false;         // HTTP 200 and a complete stream
  bool cancelled = false;  // stopped by Ctrl-C (not a server failure)
  int http_status = 0;     // 0 when no response (connection error, timeout)
  std::string error;       // why it failed
  std::string finish_reason;
  std::string text;  // generated text, kept only where a mode needs it (needle)
};

nlohmann::json to_json(const RequestRecord& record);
RequestRecord record_from_json(const nlohmann::json& j);  // Error on a malformed line

// One JSONL line (no newline); invalid UTF-8 in generated text becomes U+FFFD
// instead of an exception.
std::string json_line(const nlohmann::json& j);

}  // namespace llmesh::bench
