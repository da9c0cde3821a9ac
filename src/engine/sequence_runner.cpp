#include "engine/sequence_runner.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"
#include "engine/sampler.h"

namespace llmesh {

namespace {
double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

SequenceRunner::SequenceRunner(LoadedModel& model, int64_t context_tokens, int64_t block_size)
    : model_(model),
      context_tokens_(context_tokens),
      blocks_((context_tokens + block_size - 1) / block_size, block_size),
      table_(block_size) {
  const ModelConfig& config = model.config();
  KvCacheShape shape;
  shape.num_layers = config.num_layers;
  shape.num_kv_heads = config.num_kv_heads;
  shape.head_dim = config.head_dim;
  shape.block_size = block_size;
  shape.num_blocks = blocks_.num_blocks();
  kv_ = std::make_unique<KvPool>(shape);
  logits_.resize(size_t(config.vocab_size));
}

void SequenceRunner::forward(int64_t begin, int64_t end, bool want_logits) {
  check(table_.reserve(blocks_, end), "KV cache full at {} tokens", end);
  step_.clear();
  for (int64_t p = begin; p < end; ++p) {
    step_.token_ids.push_back(tokens_[size_t(p)]);
    step_.positions.push_back(int32_t(p));
    step_.seq_index.push_back(0);
    step_.slot_mapping.push_back(table_.slot(p));
  }
  step_.block_tables.push_back(table_.block_ids().data());
  if (want_logits) step_.logits_indices.push_back(int32_t(end - begin - 1));
  model_.model->forward(step_, *kv_, logits_.data());
  num_computed_tokens_ = end;
}

GenerateResult SequenceRunner::generate(const std::vector<int32_t>& prompt_ids, const GenerateOptions& options,
                                        const std::function<bool(int32_t)>& on_token, bool keep_first_logits) {
  check(!prompt_ids.empty(), "the prompt is empty");
  const int64_t num_prompt = int64_t(prompt_ids.size());
  check(num_prompt < context_tokens_,
        "the prompt has {} tokens but the context holds {}; shorten the prompt or raise --ctx-size", num_prompt,
        context_tokens_);
  GenerateResult result;
  result.num_prompt_tokens = num_prompt;

  // Reuse the K/V of the longest common prefix with what we computed before
  // (at least one token is recomputed so there are logits to sample from).
  int64_t common = 0;
  const int64_t limit = std::min<int64_t>(num_computed_tokens_, num_prompt - 1);
  while (common < limit && tokens_[size_t(common)] == prompt_ids[size_t(common)]) ++common;
  tokens_ = prompt_ids;
  num_computed_tokens_ = common;
  result.num_cached_tokens = common;

  const auto start = std::chrono::steady_clock::now();
  for (int64_t begin = common; begin < num_prompt; begin += options.prefill_chunk_tokens) {
    const int64_t end = std::min(num_prompt, begin + options.prefill_chunk_tokens);
    forward(begin, end, end == num_prompt);
  }
  result.prefill_seconds = seconds_since(start);
  if (keep_first_logits) result.first_logits = logits_;

  Sampler sampler(options.sampling);
  const int64_t max_tokens = std::min(options.max_tokens, context_tokens_ - num_prompt);
  const auto decode_start = std::chrono::steady_clock::now();
  while (true) {
    const int32_t id = sampler.sample(logits_, prompt_ids, result.output_ids);
    result.output_ids.push_back(id);
    tokens_.push_back(id);
    if (!on_token(id)) {
      result.finish_reason = FinishReason::Aborted;
      break;
    }
    const bool is_eos = std::find(model_.eos_token_ids.begin(), model_.eos_token_ids.end(), id) !=
                        model_.eos_token_ids.end();
    if (is_eos && !options.ignore_eos) {
      result.finish_reason = FinishReason::Eos;
      break;
    }
    if (int64_t(result.output_ids.size()) >= max_tokens) {
      result.finish_reason = FinishReason::Length;
      break;
    }
    forward(int64_t(tokens_.size()) - 1, int64_t(tokens_.size()), true);
  }
  result.decode_seconds = seconds_since(decode_start);
  return result;
}

}  // namespace llmesh
