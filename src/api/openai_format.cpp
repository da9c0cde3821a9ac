#include "api/openai_format.h"

#include <chrono>

namespace llmesh::api {

using nlohmann::json;

json usage_json(int64_t num_prompt_tokens, int64_t num_completion_tokens, int64_t num_cached_tokens) {
  return {{"prompt_tokens", num_prompt_tokens},
          {"completion_tokens", num_completion_tokens},
          {"total_tokens", num_prompt_tokens + num_completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", num_cached_tokens}}}};
}

namespace {

json token_entry(const text::Tokenizer& tokenizer, int32_t token_id, float logprob) {
  const std::string bytes = token_id >= 0 && token_id < tokenizer.vocab_size() ? tokenizer.token_bytes(token_id) : "";
  json byte_values = json::array();
  for (unsigned char b : bytes) byte_values.push_back(int(b));
  return {{"token", bytes}, {"logprob", logprob}, {"bytes", byte_values}};
}

}  // namespace

json chat_logprob_entries(const text::Tokenizer& tokenizer, const std::vector<TokenLogprobs>& tokens) {
  json entries = json::array();
  for (const auto& t : tokens) {
    json entry = token_entry(tokenizer, t.token_id, t.logprob);
    json top = json::array();
    for (const auto& alt : t.top_logprobs) top.push_back(token_entry(tokenizer, alt.token_id, alt.logprob));
    entry["top_logprobs"] = top;
    entries.push_back(std::move(entry));
  }
  return entries;
}

std::string finish_reason_string(engine::FinishReason reason, bool emitted_tool_calls) {
  if (emitted_tool_calls && (reason == engine::FinishReason::Eos || reason == engine::FinishReason::StopSequence))
    return "tool_calls";
  return std::string(engine::openai_finish_reason(reason));
}

json tool_calls_json(const std::vector<text::ParsedToolCall>& calls, size_t first_index, bool streaming) {
  json out = json::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    json call = {{"id", calls[i].id},
                 {"type", "function"},
                 {"function", {{"name", calls[i].name}, {"arguments", calls[i].arguments_json}}}};
    if (streaming) call["index"] = first_index + i;
    out.push_back(std::move(call));
  }
  return out;
}

int64_t unix_time_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace llmesh::api
