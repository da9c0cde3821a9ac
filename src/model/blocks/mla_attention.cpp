#include "model/blocks/mla_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "core/error.h"
#include "kernels/ops.h"
#include "model/blocks/rope.h"
#include "model/weight_store.h"

namespace llmesh::model {

namespace {

// Per-head matrices {H, rows, cols} of a stacked tensor, as H Linear views.
std::vector<Linear> per_head(const Tensor& stacked) {
  std::vector<Linear> heads(size_t(stacked.shape[0]));
  for (int64_t h = 0; h < stacked.shape[0]; ++h) heads[size_t(h)].weight = stacked.index(h);
  return heads;
}

void expect_shape(const Tensor& t, const std::vector<int64_t>& shape) {
  Tensor expected;
  expected.shape = shape;
  check(t.shape == shape, "tensor {} has shape {}, expected {}", t.name, t.shape_string(), expected.shape_string());
}

}  // namespace

int64_t MlaAttention::scratch_floats(const ModelConfig& c) {
  const int64_t head_part = std::max({c.qk_nope_dim, c.kv_lora_rank, c.v_head_dim});
  return c.num_heads * c.rope_dim() + 2 * head_part + c.q_lora_rank;
}

MlaAttention::MlaAttention(const ModelConfig& config, const WeightStore& weights, int64_t layer,
                           const std::vector<float>& inv_freq, const ModelShard& shard)
    : config_(config), inv_freq_(inv_freq) {
  check(config.is_mla(), "multi-head latent attention needs kv_lora_rank > 0");
  check(shard.tp_size == 1,
        "multi-head latent attention does not split over tensor-parallel ranks (its one latent row serves every "
        "head); use --pp or --ep");
  // YaRN's cos/sin factor would have to scale only the rotary part of each score; every MLA
  // config sets mscale = mscale_all_dim, which makes it 1 (the softmax factor then carries it all).
  check(std::abs(rope_attention_factor(config) - 1.0f) < 1e-6f,
        "multi-head latent attention with a YaRN attention factor of {} on its rotary dims is not supported "
        "(DeepSeek's configs set mscale = mscale_all_dim, which makes it 1)",
        rope_attention_factor(config));
  const int64_t H = config.num_heads, nope = config.qk_nope_dim, rope = config.rope_dim();
  const int64_t latent = config.kv_lora_rank, v = config.v_head_dim, hidden = config.hidden_size;
  check(config.head_dim == nope + rope, "MLA head_dim {} is not qk_nope_head_dim {} + qk_rope_head_dim {}",
        config.head_dim, nope, rope);
  score_scale_ = mla_score_factor(config) / std::sqrt(float(config.head_dim));

  const std::string prefix = "blk." + std::to_string(layer) + ".";
  if (config.q_lora_rank > 0) {
    q_a_ = Linear::load(weights, prefix + "attn_q_a", config.q_lora_rank, hidden);
    q_a_norm_ = load_f32_vector(weights, prefix + "attn_q_a_norm.weight", config.q_lora_rank);
    q_b_ = Linear::load(weights, prefix + "attn_q_b", H * config.head_dim, config.q_lora_rank);
  } else {
    q_ = Linear::load(weights, prefix + "attn_q", H * config.head_dim, hidden);
  }
  const Linear kv_a = Linear::load(weights, prefix + "attn_kv_a_mqa", latent + rope, hidden);
  check(kv_a.bias.empty(), "{}attn_kv_a_mqa has a bias, which MLA does not use", prefix);
  kv_latent_.weight = kv_a.weight.slice_rows(0, latent);
  k_rope_.weight = kv_a.weight.slice_rows(latent, latent + rope);
  kv_a_norm_ = load_f32_vector(weights, prefix + "attn_kv_a_norm.weight", latent);

  if (weights.has(prefix + "attn_k_b.weight")) {  // llama.cpp's MLA layout: already split and transposed
    const Tensor& k_b = weights.get(prefix + "attn_k_b.weight");
    const Tensor& v_b = weights.get(prefix + "attn_v_b.weight");
    expect_shape(k_b, {H, latent, nope});
    expect_shape(v_b, {H, v, latent});
    k_absorb_ = per_head(k_b);
    v_up_ = per_head(v_b);
  } else {  // HF's kv_b_proj (and older GGUFs): head h's rows are [W_uk[h] (nope rows); W_uv[h] (v rows)]
    const Tensor& kv_b = weights.get(prefix + "attn_kv_b.weight");
    expect_shape(kv_b, {H * (nope + v), latent});
    // W_uk[h]^T is a transposed copy, in f32 (once, at load).
    auto storage = std::shared_ptr<float[]>(new float[size_t(H * latent * nope)]);
    std::vector<float> dense_row(static_cast<size_t>(latent));
    k_absorb_.resize(size_t(H));
    v_up_.resize(size_t(H));
    for (int64_t h = 0; h < H; ++h) {
      float* transposed = storage.get() + h * latent * nope;  // {latent, nope}
      for (int64_t d = 0; d < nope; ++d) {
        kernels::dequantize_row(kv_b.dtype, kv_b.row(h * (nope + v) + d), dense_row.data(), latent);
        for (int64_t l = 0; l < latent; ++l) transposed[l * nope + d] = dense_row[size_t(l)];
      }
      Tensor w;
      w.name = prefix + "attn_k_b (from attn_kv_b)";
      w.dtype = DType::F32;
      w.shape = {latent, nope};
      w.data = transposed;
      k_absorb_[size_t(h)].weight = w;
      v_up_[size_t(h)].weight = kv_b.slice_rows(h * (nope + v) + nope, (h + 1) * (nope + v));
    }
    k_absorb_storage_ = std::move(storage);
  }
  o_proj_ = Linear::load(weights, prefix + "attn_output", hidden, H * v);
}

void MlaAttention::forward(kernels::Backend& be, const float* h, float* out, const AttentionStep& step,
                           const kernels::KvLayerView& kv, Workspace& ws) const {
  const int64_t T = step.batch.num_tokens;
  const int64_t H = config_.num_heads, nope = config_.qk_nope_dim, rope = config_.rope_dim();
  const int64_t latent = config_.kv_lora_rank, v = config_.v_head_dim, qk = config_.head_dim;
  const int64_t row = latent + rope;  // one cached row, and one absorbed query head
  check(kv.num_kv_heads == 1 && kv.head_dim == row && kv.v_dim() == latent && kv.v == kv.k,
        "MLA needs a KV pool of one {}-dim row per position whose first {} values are the values", row, latent);
  const bool interleaved = config_.rope_style == RopeStyle::Interleaved;
  const Activations& a = ws.act();
  // The slices, by the time they hold each part (ActivationDims for MLA sizes q and attn to H * row):
  float* q = a.attn;        // [T, H, qk]      the queries; later the latent outputs [T, H, latent]
  float* q_abs = a.q;       // [T, H, row]     absorbed queries; later the heads' values [T, H, v]
  float* cached = a.k;      // [T, row]        the rows to cache
  float* c = a.v;           // [T, latent]     the latent, then
  float* k_pe = a.v + T * latent;  // [T, rope]
  float* q_pe = a.attn_scratch;    // [T, H, rope]
  const int64_t head_part = std::max({nope, latent, v});
  float* head_in = q_pe + T * H * rope;  // [T, head_part] one head's slice, contiguous
  float* head_out = head_in + T * head_part;
  float* q_low = head_out + T * head_part;  // [T, q_lora]

  // Queries.
  if (config_.q_lora_rank > 0) {
    q_a_.apply(be, h, q_low, T);
    be.rmsnorm(q_low, q_a_norm_.data(), q_low, T, config_.q_lora_rank, config_.rms_norm_eps);
    q_b_.apply(be, q_low, q, T);
  } else {
    q_.apply(be, h, q, T);
  }
  // The cached row [c | k_rope].
  kv_latent_.apply(be, h, c, T);
  be.rmsnorm(c, kv_a_norm_.data(), c, T, latent, config_.rms_norm_eps);
  k_rope_.apply(be, h, k_pe, T);
  be.rope_inplace(k_pe, T, 1, rope, rope, step.batch.positions, inv_freq_.data(), interleaved);
  be.copy_columns(c, latent, cached, row, T, latent);
  be.copy_columns(k_pe, rope, cached + latent, row, T, rope);
  be.store_kv(cached, nullptr, step.slot_mapping, T, kv);

  // Absorbed queries [W_uk[h]^T q_nope | rope(q_rope)] per head.
  be.copy_columns(q + nope, qk, q_pe, rope, T * H, rope);
  be.rope_inplace(q_pe, T, H, rope, rope, step.batch.positions, inv_freq_.data(), interleaved);
  be.copy_columns(q_pe, rope, q_abs + latent, row, T * H, rope);
  for (int64_t head = 0; head < H; ++head) {
    be.copy_columns(q + head * qk, H * qk, head_in, nope, T, nope);
    k_absorb_[size_t(head)].apply(be, head_in, head_out, T);
    be.copy_columns(head_out, latent, q_abs + head * row, H * row, T, latent);
  }

  // Attention over the latent rows, then each head's values W_uv[h] (p . c).
  float* latent_out = q;  // the queries are consumed
  be.paged_attention(q_abs, latent_out, step.batch, kv, H, score_scale_, nullptr);
  float* values = q_abs;  // so are the absorbed queries
  for (int64_t head = 0; head < H; ++head) {
    be.copy_columns(latent_out + head * latent, H * latent, head_in, latent, T, latent);
    v_up_[size_t(head)].apply(be, head_in, head_out, T);
    be.copy_columns(head_out, v, values + head * v, H * v, T, v);
  }
  o_proj_.apply(be, values, out, T);
}

}  // namespace llmesh::model
