// Turns a generation's parsed output (reasoning / content / tool calls) into
// Responses API output items and the stream events that build them, in the
// order the official SDK's accumulator and Codex check:
//
//   response.created, response.in_progress                       (start)
//   per output item, output_index 0, 1, … in order, one open at a time:
//     reasoning:  output_item.added, reasoning_summary_part.added,
//                 reasoning_summary_text.delta…, reasoning_summary_text.done,
//                 reasoning_summary_part.done, output_item.done
//     message:    output_item.added, content_part.added, output_text.delta…,
//                 output_text.done, content_part.done, output_item.done
//     tool call:  output_item.added, function_call_arguments.delta,
//                 function_call_arguments.done, output_item.done
//   response.completed | response.incomplete | response.failed     (end)
//
// sequence_number starts at 0 and grows by one per event. A change of kind
// (reasoning -> text -> tool call, or back) closes the open item and opens
// the next one. Whitespace-only text is held back until real text follows, so
// the newlines between tool calls make no empty message items.
// The non-streaming response uses the same writer and ignores the events, so
// both paths produce the same output items.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/responses_object.h"
#include "engine/finish_reason.h"
#include "text/output_parser.h"
#include "text/tokenizer.h"

namespace llmesh::api {

class ResponsesEventWriter {
 public:
  ResponsesEventWriter(ResponseEnvelope envelope, bool include_encrypted_reasoning);

  std::vector<nlohmann::json> start();                               // created, in_progress
  std::vector<nlohmann::json> push(const text::OutputDelta& delta);  // item events
  // Closes the open item; then response.completed (Eos, StopSequence) or
  // response.incomplete (Length: max_output_tokens) or response.failed (Aborted).
  std::vector<nlohmann::json> finish(engine::FinishReason reason, const ResponsesUsage& usage);
  // An error after the stream started: response.failed carrying it (the last event).
  std::vector<nlohmann::json> fail(const std::string& code, const std::string& message);
  std::vector<nlohmann::json> keepalive();

  // The response object after finish() or fail() (what a non-streaming request returns).
  const nlohmann::json& final_response() const { return final_response_; }
  // Completed output items so far.
  const nlohmann::json& output() const { return output_; }
  // All reasoning text generated (for the reasoning token count).
  const std::string& reasoning_text() const { return all_reasoning_; }

 private:
  enum class ItemKind { Reasoning, Message };
  struct OpenItem {
    ItemKind kind;
    std::string item_id;
    int64_t output_index = 0;
    std::string text;
  };

  nlohmann::json event(const std::string& type, nlohmann::json fields = nlohmann::json::object());
  void open(ItemKind kind, std::vector<nlohmann::json>& events);
  void close(std::vector<nlohmann::json>& events, const std::string& message_status);
  void add_reasoning(const std::string& text, std::vector<nlohmann::json>& events);
  void add_text(const std::string& text, std::vector<nlohmann::json>& events);
  void add_tool_call(const text::ParsedToolCall& call, std::vector<nlohmann::json>& events);

  ResponseEnvelope envelope_;
  bool include_encrypted_reasoning_;
  int64_t next_sequence_number_ = 0;
  std::optional<OpenItem> open_;
  std::string held_whitespace_;  // text that may yet start a message
  nlohmann::json output_ = nlohmann::json::array();
  std::string all_reasoning_;
  nlohmann::json final_response_;
};

// The reasoning share of the output tokens: `reasoning_text` re-encoded, plus
// the <think> and </think> tags, never more than `num_output_tokens`.
// (An estimate: re-encoding may split text differently from generation.)
int64_t estimate_reasoning_tokens(const text::Tokenizer& tokenizer, const std::string& reasoning_text,
                                  int64_t num_output_tokens);

}  // namespace llmesh::api
