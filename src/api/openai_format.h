// Response shapes shared by the OpenAI adapters: usage, logprobs, finish reasons.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/token_text_pipeline.h"
#include "text/tokenizer.h"

namespace llmesh::api {

// {"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details": {"cached_tokens"}}
nlohmann::json usage_json(int64_t num_prompt_tokens, int64_t num_completion_tokens, int64_t num_cached_tokens);

// Chat format: [{"token", "logprob", "bytes", "top_logprobs": [{"token", "logprob", "bytes"}]}]
nlohmann::json chat_logprob_entries(const text::Tokenizer& tokenizer, const std::vector<TokenLogprobs>& tokens);

// The finish_reason string; "tool_calls" when the model ended after calling tools.
std::string finish_reason_string(engine::FinishReason reason, bool emitted_tool_calls);

// OpenAI's tool_calls entries for a delta (`first_index`: the index of the first call in the response).
nlohmann::json tool_calls_json(const std::vector<text::ParsedToolCall>& calls, size_t first_index, bool streaming);

int64_t unix_time_seconds();

}  // namespace llmesh::api
