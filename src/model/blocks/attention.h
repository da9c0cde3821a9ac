// Grouped-query self-attention over the paged KV cache, with the options the
// supported families differ in: q/k/v biases (Qwen2), per-head q/k RMSNorm
// (Qwen3), the RoPE pairing style and frequencies, partial rotary (GLM-4.5:
// RoPE on the first config.rope_dim() dims of each head only) and attention sinks
// (gpt-oss; an o_proj bias comes with attention_bias there). A sliding window
// comes with the layer's KvLayerView (its `window`, which the decoder sets from
// ModelConfig::layer_window) and is the kernel's to apply.
#pragma once

#include <vector>

#include "kernels/backend.h"
#include "model/blocks/attention_block.h"
#include "model/blocks/linear.h"
#include "model/model_config.h"
#include "model/model_shard.h"
#include "model/workspace.h"

namespace llmesh::model {

class WeightStore;

class Attention final : public AttentionBlock {
 public:
  // With shard.tp_size > 1: this rank's num_heads / tp_size query heads and
  // num_kv_heads / tp_size KV heads (so `kv` holds only those), and o_proj's matching columns.
  Attention(const ModelConfig& config, const WeightStore& weights, int64_t layer,
            const std::vector<float>& inv_freq, const ModelShard& shard = {});

  // h: [num_tokens, hidden] (already normed); out: [num_tokens, hidden], the
  // attention output after o_proj (a partial sum when partial()). Writes this step's K/V into `kv`.
  // Scratch: ws.act().q, k, v, attn.
  void forward(kernels::Backend& backend, const float* h, float* out, const AttentionStep& step,
               const kernels::KvLayerView& kv, Workspace& ws) const override;
  bool partial() const override { return partial_; }

 private:
  const ModelConfig& config_;
  int64_t num_heads_, num_kv_heads_;  // this rank's
  bool partial_;
  const std::vector<float>& inv_freq_;
  float score_scale_;  // 1/sqrt(head_dim), times YaRN's attention factor squared
  Linear q_proj_, k_proj_, v_proj_, o_proj_;
  std::vector<float> q_norm_, k_norm_;  // [head_dim] or empty
  std::vector<float> sinks_;            // this rank's heads' sink logits, or empty
};

}  // namespace llmesh::model
