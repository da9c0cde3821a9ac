// Anthropic Messages over an upstream that only speaks OpenAI chat
// completions (kind=openai: vLLM, SGLang, llama-server).
//
// Request: the body is parsed and validated by the same code `llmesh serve`
// uses (api::parse_messages_request: a bad body gets the same Anthropic 400),
// and its OpenAI-style messages become a chat completions body:
//   system blocks               -> a first system message (billing header dropped)
//   role "system" in messages   -> a system message at that position (kept in place)
//   tool_result blocks          -> role "tool" messages, in the client's order
//   tool_use                    -> assistant tool_calls (arguments as JSON text)
//   thinking blocks             -> assistant reasoning_content
//   a final assistant turn      -> continue_final_message (vLLM) prefill
//   thinking on/off             -> chat_template_kwargs.enable_thinking
//   tool_choice any/tool/none   -> "required" / {type: function, ...} / "none"
//   output_config.format        -> response_format json_schema
//   stream                      -> stream + stream_options.include_usage
//
// Response (MessagesFromChat): chat chunks become Anthropic events through the
// same writer `llmesh serve` uses (api::AnthropicEventWriter), so the event
// order is Anthropic's: message_start, then thinking (reasoning_content or
// reasoning) first with its signature, text, each tool_use (arguments
// collected whole, then one input_json_delta), message_delta with the usage,
// message_stop. A non-streaming answer is the same events folded into one
// message. Upstream errors become Anthropic error bodies with the upstream's
// status; a stream that breaks ends with `event: error`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/anthropic_stream.h"
#include "route/response_translator.h"

namespace llmesh::route {

// The chat completions body for a Messages body; api::ApiError 400 when the body is invalid.
nlohmann::ordered_json chat_body_for_messages(const std::string& messages_body);

class MessagesFromChat : public ResponseTranslator {
 public:
  // model: echoed as the client named it; stop_sequences: to tell a stop sequence from EOS.
  MessagesFromChat(std::string model, std::vector<std::string> stop_sequences);

  void begin(int upstream_status, const std::string& upstream_content_type) override;
  std::string content_type() const override;
  std::string translate(std::string_view upstream_bytes) override;
  std::string finish(bool upstream_ok) override;

 private:
  enum class Mode { error, whole, stream };
  struct PendingToolCall {
    std::string id, name, arguments;
  };
  // One chat chunk (or a whole completion's choice folded into one) -> events.
  void on_chunk(const nlohmann::json& chunk, std::vector<nlohmann::json>& events);
  void close(std::vector<nlohmann::json>& events);
  std::string render(const std::vector<nlohmann::json>& events) const;

  std::string model_;
  std::vector<std::string> stop_sequences_;
  Mode mode_ = Mode::error;
  int status_ = 0;
  std::string body_;      // error / whole: the upstream body; stream: the incomplete last line
  api::AnthropicEventWriter writer_;
  bool started_ = false;  // message_start sent
  bool closed_ = false;   // message_stop (or an error event) sent
  std::map<int64_t, PendingToolCall> tool_calls_;  // by the chunk's tool call index
  std::string finish_reason_, matched_stop_;
  int64_t prompt_tokens_ = 0, cached_tokens_ = 0, output_tokens_ = 0;
};

}  // namespace llmesh::route
