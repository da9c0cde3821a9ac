// The per-request path from engine TokenEvents to protocol-neutral deltas:
//   token ids -> StreamingDecoder (whole UTF-8 characters)
//             -> StopStringMatcher (stop strings never leak)
//             -> OutputParser (reasoning / content / tool calls)
// Special (control) tokens are not text and are dropped, except those whose
// text is a marker the parser acts on (some GGUF files type <think> or
// DeepSeek's tool-call tokens as control tokens).
// Independent of HTTP and of the engine thread, so it is unit-tested alone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "api/stop_string_matcher.h"
#include "engine/request.h"
#include "text/output_parser.h"
#include "text/streaming_decoder.h"
#include "text/tokenizer.h"

namespace llmesh::api {

struct TokenLogprobs {
  int32_t token_id = -1;
  float logprob = 0.0f;
  std::vector<engine::TopLogprob> top_logprobs;
};

// What one TokenEvent turned into (often empty while text is held back).
struct PipelineOutput {
  text::OutputDelta delta;
  std::vector<TokenLogprobs> logprobs;                              // the tokens of this event (when collected)
  engine::FinishReason finish_reason = engine::FinishReason::None;  // set on the last output
};

struct PipelineOptions {
  std::vector<std::string> stop_strings;
  text::OutputParserOptions parser;  // for plain completions: parse_reasoning = parse_tool_calls = false
  bool collect_logprobs = false;
};

class TokenTextPipeline {
 public:
  TokenTextPipeline(const text::Tokenizer& tokenizer, PipelineOptions options);

  // Precondition: !finished(). An event with `error` throws ApiError 500.
  PipelineOutput push(const engine::TokenEvent& event);
  // The request ended without a final event (channel closed, cancelled): flush as Aborted.
  PipelineOutput abort();

  bool finished() const { return finish_reason_ != engine::FinishReason::None; }
  engine::FinishReason finish_reason() const { return finish_reason_; }
  // True once a stop string ended the text: the caller should cancel the engine request.
  bool stopped_by_string() const { return stop_matcher_.stopped(); }
  // The stop string that ended the text ("" when none did).
  const std::string& matched_stop_string() const { return stop_matcher_.matched(); }
  int64_t num_generated_tokens() const { return num_generated_tokens_; }
  int64_t num_prompt_tokens() const { return num_prompt_tokens_; }
  int64_t num_cached_tokens() const { return num_cached_tokens_; }
  bool emitted_tool_calls() const { return num_tool_calls_ > 0; }

 private:
  void finish(PipelineOutput& out, engine::FinishReason reason, bool flush_text);
  bool keeps_token_text(int32_t token_id) const;

  const text::Tokenizer& tokenizer_;
  PipelineOptions options_;
  text::StreamingDecoder decoder_;
  StopStringMatcher stop_matcher_;
  text::OutputParser parser_;
  std::vector<int32_t> kept_special_ids_;  // special tokens that are parser markers (few)
  engine::FinishReason finish_reason_ = engine::FinishReason::None;
  int64_t num_generated_tokens_ = 0;
  int64_t num_prompt_tokens_ = 0;
  int64_t num_cached_tokens_ = 0;
  int64_t num_tool_calls_ = 0;
};

}  // namespace llmesh::api
