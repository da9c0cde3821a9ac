// POST /v1/chat/completions: messages -> chat template -> tokens -> engine ->
// reasoning_content / content / tool_calls, as one response or as
// chat.completion.chunk events.
#pragma once

#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "api/generation_request.h"
#include "api/openai_request.h"
#include "api/server_context.h"
#include "api/token_text_pipeline.h"

namespace llmesh::api {

// Formats chat.completion.chunk events for one streamed response.
class ChatChunkFormatter {
 public:
  ChatChunkFormatter(std::string id, int64_t created, std::string model, const text::Tokenizer& tokenizer);

  nlohmann::json role_chunk() const;  // the first chunk: role (and empty content)
  // Content/reasoning/tool-call deltas, then the finish chunk when output.finish_reason is set.
  std::vector<nlohmann::json> chunks(const PipelineOutput& output, bool emitted_tool_calls);
  nlohmann::json usage_chunk(const nlohmann::json& usage) const;  // choices: []

 private:
  nlohmann::json chunk(nlohmann::json delta, nlohmann::json finish_reason, nlohmann::json logprobs) const;

  std::string id_;
  int64_t created_;
  std::string model_;
  const text::Tokenizer& tokenizer_;
  size_t num_tool_calls_ = 0;
};

// Accumulates outputs into one chat.completion object.
class ChatResponseBuilder {
 public:
  explicit ChatResponseBuilder(const text::Tokenizer& tokenizer) : tokenizer_(tokenizer) {}
  void add(const PipelineOutput& output);
  nlohmann::json build(const std::string& id, int64_t created, const std::string& model,
                       engine::FinishReason finish_reason, const nlohmann::json& usage, bool include_logprobs) const;

 private:
  const text::Tokenizer& tokenizer_;
  text::OutputDelta message_;
  std::vector<TokenLogprobs> logprobs_;
};

void handle_chat_completions(ServerContext& ctx, const httplib::Request& req, httplib::Response& res);

}  // namespace llmesh::api
