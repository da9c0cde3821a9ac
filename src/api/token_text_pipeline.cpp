#include "api/token_text_pipeline.h"

#include <algorithm>

#include "api/api_error.h"

namespace llmesh::api {

TokenTextPipeline::TokenTextPipeline(const text::Tokenizer& tokenizer, PipelineOptions options)
    : tokenizer_(tokenizer),
      options_(std::move(options)),
      decoder_(tokenizer, /*skip_special=*/false),  // keeps_token_text() skips them instead
      stop_matcher_(options_.stop_strings),
      parser_(options_.parser) {
  for (const std::string& marker : parser_.markers()) {
    const std::optional<int32_t> id = tokenizer_.token_id(marker);
    if (id && tokenizer_.is_special(*id)) kept_special_ids_.push_back(*id);
  }
}

bool TokenTextPipeline::keeps_token_text(int32_t token_id) const {
  if (!tokenizer_.is_special(token_id)) return true;
  return std::find(kept_special_ids_.begin(), kept_special_ids_.end(), token_id) != kept_special_ids_.end();
}

PipelineOutput TokenTextPipeline::push(const engine::TokenEvent& event) {
  PipelineOutput out;
  if (!event.error.empty()) {
    finish_reason_ = engine::FinishReason::Aborted;
    throw ApiError(500, "server_error", "generation failed: " + event.error);
  }
  if (event.num_prompt_tokens > 0) {
    num_prompt_tokens_ = event.num_prompt_tokens;
    num_cached_tokens_ = event.num_cached_tokens;
  }
  if (event.token_id >= 0) {
    ++num_generated_tokens_;
    if (options_.collect_logprobs) out.logprobs.push_back({event.token_id, event.logprob, event.top_logprobs});
    // The token that ends generation (EOS or a stop token id) is not text.
    const bool is_stop_token =
        event.finish_reason == engine::FinishReason::Eos || event.finish_reason == engine::FinishReason::StopSequence;
    if (!is_stop_token && !stop_matcher_.stopped() && keeps_token_text(event.token_id)) {
      std::string safe = stop_matcher_.push(decoder_.push(event.token_id));
      out.delta.append(parser_.push(safe));
    }
  }
  if (stop_matcher_.stopped()) {
    finish(out, engine::FinishReason::StopSequence, /*flush_text=*/false);
  } else if (event.finish_reason != engine::FinishReason::None) {
    finish(out, event.finish_reason, /*flush_text=*/true);
  }
  num_tool_calls_ += int64_t(out.delta.tool_calls.size());
  return out;
}

PipelineOutput TokenTextPipeline::abort() {
  PipelineOutput out;
  if (!finished()) finish(out, engine::FinishReason::Aborted, /*flush_text=*/true);
  num_tool_calls_ += int64_t(out.delta.tool_calls.size());
  return out;
}

void TokenTextPipeline::finish(PipelineOutput& out, engine::FinishReason reason, bool flush_text) {
  if (flush_text) {
    std::string tail = stop_matcher_.push(decoder_.flush());
    if (!stop_matcher_.stopped()) tail += stop_matcher_.flush();
    else
      reason = engine::FinishReason::StopSequence;
    out.delta.append(parser_.push(tail));
  }
  out.delta.append(parser_.finish());
  finish_reason_ = reason;
  out.finish_reason = reason;
}

}  // namespace llmesh::api
