// Reads a response as it passes through the router, without changing it:
// when the first output arrived (TTFT), the usage the upstream reported
// (prompt, cached, output tokens) and any in-band error. Understands OpenAI
// chat/completions chunks, Anthropic Messages events and Responses events,
// streamed (SSE) or whole (JSON).
//
// Cost: an SSE event is parsed as JSON only until the first output was seen,
// and after that only when it mentions "usage" or "error"; a JSON body is kept
// (up to 4 MiB) and parsed once at the end.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace llmesh::route {

struct ObservedUsage {
  int64_t prompt_tokens = -1;  // all prompt tokens (Anthropic: input + cache read + cache creation)
  int64_t cached_tokens = -1;
  int64_t output_tokens = -1;
};

class ResponseObserver {
 public:
  explicit ResponseObserver(bool sse) : sse_(sse) {}

  // `elapsed_s`: seconds since the request arrived at the router.
  void feed(std::string_view bytes, double elapsed_s);
  // The body is complete (JSON bodies are read here).
  void finish(double elapsed_s);

  double first_output_s() const { return first_output_s_; }  // -1: none seen
  const ObservedUsage& usage() const { return usage_; }
  const std::string& error() const { return error_; }  // "" when none
  // SSE: everything so far ended on an event boundary (a blank line), so the
  // router may add an event of its own.
  bool at_event_boundary() const { return line_.empty() && last_line_blank_; }
  int64_t num_events() const { return num_events_; }

 private:
  void on_payload(std::string_view payload, double elapsed_s);
  void on_json(const std::string& text, double elapsed_s, bool whole_body);

  bool sse_;
  std::string line_;        // SSE: the incomplete last line
  bool last_line_blank_ = true;
  std::string body_;        // JSON: the body so far
  bool body_truncated_ = false;
  double first_output_s_ = -1;
  ObservedUsage usage_;
  int64_t anthropic_cache_read_ = -1, anthropic_cache_creation_ = -1;
  std::string error_;
  int64_t num_events_ = 0;
};

}  // namespace llmesh::route
