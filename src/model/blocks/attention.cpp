#include "model/blocks/attention.h"

#include <cmath>

#include "core/error.h"
#include "model/blocks/rope.h"
#include "model/weight_store.h"

namespace llmesh::model {

Attention::Attention(const ModelConfig& config, const WeightStore& weights, int64_t layer,
                     const std::vector<float>& inv_freq, const ModelShard& shard)
    : config_(config),
      num_heads_(config.num_heads / shard.tp_size),
      num_kv_heads_(config.num_kv_heads / shard.tp_size),
      partial_(shard.tp_size > 1),
      inv_freq_(inv_freq) {
  // YaRN multiplies cos and sin by its attention factor m, so q.k by m^2: applied here to the
  // scores, where it costs nothing (the rotation then stays the plain one, and V is unaffected).
  const float m = rope_attention_factor(config);
  score_scale_ = m * m / std::sqrt(float(config.head_dim));
  check(config.num_kv_heads % shard.tp_size == 0,
        "{} KV heads do not split over {} tensor-parallel ranks (each rank needs whole KV heads)",
        config.num_kv_heads, shard.tp_size);
  const std::string prefix = "blk." + std::to_string(layer) + ".";
  const int64_t q_dim = config.num_heads * config.head_dim;
  const int64_t kv_dim = config.num_kv_heads * config.head_dim;
  const LinearPart heads{LinearSplit::Rows, shard.tp_rank, shard.tp_size};
  q_proj_ = Linear::load(weights, prefix + "attn_q", q_dim, config.hidden_size, heads);
  k_proj_ = Linear::load(weights, prefix + "attn_k", kv_dim, config.hidden_size, heads);
  v_proj_ = Linear::load(weights, prefix + "attn_v", kv_dim, config.hidden_size, heads);
  o_proj_ = Linear::load(weights, prefix + "attn_output", config.hidden_size, q_dim,
                         {LinearSplit::Cols, shard.tp_rank, shard.tp_size});
  if (config.qk_norm) {
    q_norm_ = load_f32_vector(weights, prefix + "attn_q_norm.weight", config.head_dim);
    k_norm_ = load_f32_vector(weights, prefix + "attn_k_norm.weight", config.head_dim);
  }
  if (config.attention_sinks) {
    const std::vector<float> sinks = load_f32_vector(weights, prefix + "attn_sinks.weight", config.num_heads);
    const auto first = sinks.begin() + shard.tp_rank * num_heads_;
    sinks_.assign(first, first + num_heads_);
  }
}

void Attention::forward(kernels::Backend& backend, const float* h, float* out, const AttentionStep& step,
                        const kernels::KvLayerView& kv, Workspace& ws) const {
  const int64_t num_tokens = step.batch.num_tokens;
  const int64_t head_dim = config_.head_dim;
  const int64_t num_heads = num_heads_, num_kv_heads = num_kv_heads_;
  const Activations& a = ws.act();
  float* q = a.q;        // [T, num_heads, head_dim]
  float* k = a.k;        // [T, num_kv_heads, head_dim]
  float* v = a.v;        // [T, num_kv_heads, head_dim]
  float* attn = a.attn;  // [T, num_heads, head_dim]

  q_proj_.apply(backend, h, q, num_tokens);
  k_proj_.apply(backend, h, k, num_tokens);
  v_proj_.apply(backend, h, v, num_tokens);
  if (!q_norm_.empty()) {
    backend.rmsnorm(q, q_norm_.data(), q, num_tokens * num_heads, head_dim, config_.rms_norm_eps);
    backend.rmsnorm(k, k_norm_.data(), k, num_tokens * num_kv_heads, head_dim, config_.rms_norm_eps);
  }
  const bool interleaved = config_.rope_style == RopeStyle::Interleaved;
  const int64_t rotary_dim = config_.rope_dim();  // partial rotary: the rest of each head passes through
  backend.rope_inplace(q, num_tokens, num_heads, head_dim, rotary_dim, step.batch.positions, inv_freq_.data(),
                       interleaved);
  backend.rope_inplace(k, num_tokens, num_kv_heads, head_dim, rotary_dim, step.batch.positions, inv_freq_.data(),
                       interleaved);

  backend.store_kv(k, v, step.slot_mapping, num_tokens, kv);
  backend.paged_attention(q, attn, step.batch, kv, num_heads, score_scale_, sinks_.empty() ? nullptr : sinks_.data());
  o_proj_.apply(backend, attn, out, num_tokens);
}

}  // namespace llmesh::model
