#include "model/blocks/attention.h"

#include <cmath>

#include "model/weight_store.h"

namespace llmesh {

Attention::Attention(const ModelConfig& config, const WeightStore& weights, int64_t layer,
                     const std::vector<float>& inv_freq)
    : config_(config), inv_freq_(inv_freq) {
  const std::string prefix = "blk." + std::to_string(layer) + ".";
  const int64_t q_dim = config.num_heads * config.head_dim;
  const int64_t kv_dim = config.num_kv_heads * config.head_dim;
  q_proj_ = Linear::load(weights, prefix + "attn_q", q_dim, config.hidden_size);
  k_proj_ = Linear::load(weights, prefix + "attn_k", kv_dim, config.hidden_size);
  v_proj_ = Linear::load(weights, prefix + "attn_v", kv_dim, config.hidden_size);
  o_proj_ = Linear::load(weights, prefix + "attn_output", config.hidden_size, q_dim);
  if (config.qk_norm) {
    q_norm_ = load_f32_vector(weights, prefix + "attn_q_norm.weight", config.head_dim);
    k_norm_ = load_f32_vector(weights, prefix + "attn_k_norm.weight", config.head_dim);
  }
}

void Attention::forward(const float* h, float* out, const AttentionStep& step,
                        const kernels::KvLayerView& kv, ThreadPool& pool) {
  const int64_t num_tokens = step.batch.num_tokens;
  const int64_t head_dim = config_.head_dim;
  const int64_t num_heads = config_.num_heads, num_kv_heads = config_.num_kv_heads;
  q_.resize(size_t(num_tokens * num_heads * head_dim));     // [T, num_heads, head_dim]
  k_.resize(size_t(num_tokens * num_kv_heads * head_dim));  // [T, num_kv_heads, head_dim]
  v_.resize(k_.size());
  attn_.resize(q_.size());

  q_proj_.apply(h, q_.data(), num_tokens, pool);
  k_proj_.apply(h, k_.data(), num_tokens, pool);
  v_proj_.apply(h, v_.data(), num_tokens, pool);
  if (!q_norm_.empty()) {
    kernels::rmsnorm(q_.data(), q_norm_.data(), q_.data(), num_tokens * num_heads, head_dim, config_.rms_norm_eps);
    kernels::rmsnorm(k_.data(), k_norm_.data(), k_.data(), num_tokens * num_kv_heads, head_dim, config_.rms_norm_eps);
  }
  const bool interleaved = config_.rope_style == RopeStyle::Interleaved;
  kernels::rope_inplace(q_.data(), num_tokens, num_heads, head_dim, step.batch.positions, inv_freq_.data(), interleaved);
  kernels::rope_inplace(k_.data(), num_tokens, num_kv_heads, head_dim, step.batch.positions, inv_freq_.data(), interleaved);

  kernels::store_kv(k_.data(), v_.data(), step.slot_mapping, num_tokens, kv);
  const float scale = 1.0f / std::sqrt(float(head_dim));
  kernels::paged_attention(q_.data(), attn_.data(), step.batch, kv, num_heads, scale, pool);
  o_proj_.apply(attn_.data(), out, num_tokens, pool);
}

}  // namespace llmesh
