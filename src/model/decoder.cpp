#include "model/decoder.h"

#include <cstring>

#include "core/error.h"
#include "model/blocks/rope.h"
#include "model/weight_store.h"

namespace llmesh {

DecoderModel::DecoderModel(const ModelConfig& config, const WeightStore& weights, ThreadPool& pool)
    : config_(config), pool_(pool) {
  check(config.head_dim % 2 == 0, "head_dim {} must be even for RoPE", config.head_dim);
  check(config.num_kv_heads > 0 && config.num_heads % config.num_kv_heads == 0,
        "num_heads {} is not a multiple of num_kv_heads {}", config.num_heads, config.num_kv_heads);
  token_embd_ = weights.get("token_embd.weight");
  check(token_embd_.num_dims() == 2 && token_embd_.rows() == config.vocab_size &&
            token_embd_.cols() == config.hidden_size,
        "token_embd.weight has shape {}, expected [{}, {}]", token_embd_.shape_string(),
        config.vocab_size, config.hidden_size);
  output_norm_ = load_f32_vector(weights, "output_norm.weight", config.hidden_size);
  if (weights.has("output.weight")) {
    lm_head_ = Linear::load(weights, "output", config.vocab_size, config.hidden_size);
  } else {
    lm_head_.weight = token_embd_;  // tied embeddings
  }
  inv_freq_ = rope_inv_freq(config, weights);
}

DecoderLayer DecoderModel::make_layer(const WeightStore& weights, int64_t layer,
                                      std::unique_ptr<FeedForward> ffn) const {
  const std::string prefix = "blk." + std::to_string(layer) + ".";
  DecoderLayer l;
  l.attn_norm = load_f32_vector(weights, prefix + "attn_norm.weight", config_.hidden_size);
  l.attention = std::make_unique<Attention>(config_, weights, layer, inv_freq_);
  l.ffn_norm = load_f32_vector(weights, prefix + "ffn_norm.weight", config_.hidden_size);
  l.ffn = std::move(ffn);
  return l;
}

void DecoderModel::forward(const StepInput& input, KvPool& kv, float* logits) {
  const int64_t num_tokens = input.num_tokens();
  const int64_t hidden = config_.hidden_size;
  check(int64_t(layers_.size()) == config_.num_layers, "model has {} layers loaded, config says {}",
        layers_.size(), config_.num_layers);
  x_.resize(size_t(num_tokens * hidden));  // [T, hidden] residual stream
  h_.resize(x_.size());                    // [T, hidden] normed input of a block
  y_.resize(x_.size());                    // [T, hidden] output of a block

  for (int64_t t = 0; t < num_tokens; ++t) {
    const int32_t id = input.token_ids[size_t(t)];
    check(id >= 0 && id < config_.vocab_size, "token id {} is outside the vocabulary (size {})", id,
          config_.vocab_size);
    kernels::dequantize_row(token_embd_.dtype, token_embd_.row(id), x_.data() + t * hidden, hidden);
  }

  AttentionStep step;
  step.batch.num_tokens = num_tokens;
  step.batch.positions = input.positions.data();
  step.batch.seq_index = input.seq_index.data();
  step.batch.block_tables = input.block_tables.data();
  step.slot_mapping = input.slot_mapping.data();
  const KvCacheShape& shape = kv.shape();

  for (int64_t i = 0; i < int64_t(layers_.size()); ++i) {
    DecoderLayer& layer = layers_[size_t(i)];
    kernels::KvLayerView kv_layer{kv.k(i), kv.v(i), shape.block_size, shape.num_kv_heads, shape.head_dim};
    kernels::rmsnorm(x_.data(), layer.attn_norm.data(), h_.data(), num_tokens, hidden, config_.rms_norm_eps);
    layer.attention->forward(h_.data(), y_.data(), step, kv_layer, pool_);
    kernels::add_inplace(x_.data(), y_.data(), num_tokens * hidden);
    kernels::rmsnorm(x_.data(), layer.ffn_norm.data(), h_.data(), num_tokens, hidden, config_.rms_norm_eps);
    layer.ffn->forward(h_.data(), y_.data(), num_tokens, pool_);
    kernels::add_inplace(x_.data(), y_.data(), num_tokens * hidden);
  }

  // Only the requested rows go through the final norm and the (large) output head.
  const int64_t num_logits = int64_t(input.logits_indices.size());
  if (num_logits == 0) return;
  last_.resize(size_t(num_logits * hidden));  // [num_logits, hidden]
  for (int64_t i = 0; i < num_logits; ++i) {
    const int32_t t = input.logits_indices[size_t(i)];
    std::memcpy(last_.data() + i * hidden, x_.data() + int64_t(t) * hidden, sizeof(float) * size_t(hidden));
  }
  kernels::rmsnorm(last_.data(), output_norm_.data(), last_.data(), num_logits, hidden, config_.rms_norm_eps);
  lm_head_.apply(last_.data(), logits, num_logits, pool_);
}

}  // namespace llmesh
