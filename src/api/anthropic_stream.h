// The Anthropic Messages event stream, built from the pipeline's
// protocol-neutral deltas:
//
//   message_start {message: {id, type, role, model, content: [], stop_reason: null, usage}}
//   for each content block, one open at a time, index 0, 1, 2, …:
//     content_block_start {index, content_block}
//       thinking: thinking_delta … then one signature_delta
//       text:     text_delta …
//       tool_use: input_json_delta (partial_json pieces concatenate to the input object)
//     content_block_stop {index}
//   message_delta {delta: {stop_reason, stop_sequence}, usage}
//   message_stop
//
// A non-streaming response is the same events folded into one message the way
// the official SDK accumulates them (fold_message_events), so both paths
// return identical content.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/finish_reason.h"
#include "text/output_parser.h"

namespace llmesh::api {

// Usage accounting (input + cache_read + cache_creation = prompt length):
//   input_tokens                 prompt tokens computed for this request
//   cache_read_input_tokens      prompt tokens whose K/V came from the prefix cache
//   cache_creation_input_tokens  always 0: caching is automatic, nothing is billed for writing it
//   output_tokens                generated tokens (the final EOS included)
struct AnthropicUsage {
  int64_t input_tokens = 0;
  int64_t cache_read_input_tokens = 0;
  int64_t cache_creation_input_tokens = 0;
  int64_t output_tokens = 0;

  static AnthropicUsage from_counts(int64_t num_prompt_tokens, int64_t num_cached_tokens, int64_t num_output_tokens);
  nlohmann::json to_json() const;
};

// end_turn / max_tokens / stop_sequence / tool_use.
std::string_view anthropic_stop_reason(engine::FinishReason reason, bool emitted_tool_use);

// The opaque signature of a thinking block (a content hash; clients echo it back, nothing checks it).
std::string thinking_signature(std::string_view thinking);

// "toolu_…" from the parser's "call_…" id.
std::string tool_use_id(const std::string& call_id);

class AnthropicEventWriter {
 public:
  AnthropicEventWriter(std::string message_id, std::string model);

  nlohmann::json message_start(const AnthropicUsage& usage) const;
  // Block events for one delta: its reasoning (thinking block), content (text
  // block; whitespace outside a text block is held back until text follows),
  // then each tool call (a tool_use block).
  std::vector<nlohmann::json> push(const text::OutputDelta& delta);
  // Closes the open block (an output with no block at all gets one empty text
  // block: clients expect content), then message_delta and message_stop.
  std::vector<nlohmann::json> finish(engine::FinishReason reason, const std::string& stop_sequence,
                                     const AnthropicUsage& usage);

  bool emitted_tool_use() const { return num_tool_uses_ > 0; }
  int num_blocks() const { return next_index_; }

 private:
  enum class Block { None, Thinking, Text };

  void open(std::vector<nlohmann::json>& out, Block block);
  void close(std::vector<nlohmann::json>& out);
  void add_tool_use(std::vector<nlohmann::json>& out, const text::ParsedToolCall& call);

  std::string message_id_;
  std::string model_;
  Block open_block_ = Block::None;
  int next_index_ = 0;         // index of the next block to open
  std::string thinking_text_;  // of the open thinking block, for its signature
  std::string held_whitespace_;
  int num_tool_uses_ = 0;
};

// The message a sequence of events describes (message_start … message_stop),
// accumulated the way the official SDK's MessageStream does.
nlohmann::ordered_json fold_message_events(const std::vector<nlohmann::json>& events);

}  // namespace llmesh::api
