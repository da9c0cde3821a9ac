// Multi-head latent attention (DeepSeek V2 / V3, Kimi K2), with the compressed latent
// in the paged KV cache and the projections absorbed into the queries and outputs.
//
// Per token x, with H heads of nope + rope query/key dims and v value dims:
//   q       = q_b(rmsnorm(q_a(x)))  (or q_proj(x))     [H, nope + rope]
//   c       = rmsnorm(kv_a(x)[:kv_lora])               [kv_lora]   the latent
//   k_rope  = rope(kv_a(x)[kv_lora:])                  [rope]      one key shared by all heads
//   head h: k = [W_uk[h] c, k_rope], v = W_uv[h] c      (kv_b, split per head)
// The naive form decompresses k and v for every cached position. The absorbed form
// never does: q.k = (W_uk[h]^T q_nope) . c + q_rope . k_rope, and sum_j p_j v_j =
// W_uv[h] (sum_j p_j c_j). So the cache holds one row [c | k_rope] per position
// (kv_lora + rope values instead of H (nope + rope + v)), attention runs as one
// "kv head" of kv_lora + rope dims whose first kv_lora values are the values, and the
// per-head matrices act on the queries before and on the outputs after it.
#pragma once

#include <memory>
#include <vector>

#include "model/blocks/attention_block.h"
#include "model/blocks/linear.h"
#include "model/model_config.h"
#include "model/model_shard.h"

namespace llmesh::model {

class WeightStore;

class MlaAttention final : public AttentionBlock {
 public:
  // Weights (canonical names, llama.cpp's deepseek2): attn_q_a, attn_q_a_norm, attn_q_b (or attn_q),
  // attn_kv_a_mqa, attn_kv_a_norm, attn_k_b {H, kv_lora, nope} and attn_v_b {H, v, kv_lora} (or
  // attn_kv_b {H (nope + v), kv_lora}, split here), attn_output.
  MlaAttention(const ModelConfig& config, const WeightStore& weights, int64_t layer,
               const std::vector<float>& inv_freq, const ModelShard& shard = {});

  void forward(kernels::Backend& backend, const float* h, float* out, const AttentionStep& step,
               const kernels::KvLayerView& kv, Workspace& ws) const override;
  bool partial() const override { return false; }

  // Per-token floats of scratch it needs past the workspace's q, k, v and attn slices.
  static int64_t scratch_floats(const ModelConfig& config);

 private:
  const ModelConfig& config_;
  const std::vector<float>& inv_freq_;
  float score_scale_;
  Linear q_a_, q_b_, q_;               // q_a and q_b with a query bottleneck, else q
  std::vector<float> q_a_norm_, kv_a_norm_;
  Linear kv_latent_, k_rope_;          // the rows of attn_kv_a_mqa that make c and k_rope
  std::vector<Linear> k_absorb_;       // [H] {kv_lora, nope}: W_uk[h]^T, maps q_nope into latent space
  std::vector<Linear> v_up_;           // [H] {v, kv_lora}: W_uv[h]
  std::shared_ptr<const float[]> k_absorb_storage_;  // when built from attn_kv_b (a transposed copy)
  Linear o_proj_;
};

}  // namespace llmesh::model
