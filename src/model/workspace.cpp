#include "model/workspace.h"

#include <algorithm>
#include <utility>

#include "core/error.h"
#include "model/blocks/mla_attention.h"

namespace llmesh::model {

ActivationDims ActivationDims::of(const ModelConfig& config) {
  ActivationDims d;
  d.hidden = config.hidden_size;
  d.q_dim = config.num_heads * config.head_dim;
  d.kv_dim = config.num_kv_heads * config.head_dim;
  d.ffn_dim = config.is_moe() ? std::max({config.intermediate_size, config.moe_intermediate_size,
                                         config.shared_expert_intermediate()})
                              : config.intermediate_size;
  d.num_experts = config.num_experts;
  d.experts_per_token = config.num_experts_per_token;
  if (config.is_mla()) {  // q and attn hold, in turn, the queries, the absorbed queries, latent and head outputs
    const int64_t row = config.kv_row_dim();
    d.q_dim = config.num_heads * std::max({row, config.head_dim, config.v_head_dim});
    d.kv_dim = row;
    d.attn_scratch = MlaAttention::scratch_floats(config);
  }
  return d;
}

Workspace::Workspace(kernels::Backend& backend, const ActivationDims& dims, const StepShape& initial)
    : backend_(&backend), dims_(dims) {
  reserve(initial.max_tokens, initial.max_logits);
}

void Workspace::reserve(int64_t num_tokens, int64_t num_logits) {
  if (num_tokens <= capacity_.max_tokens && num_logits <= capacity_.max_logits) return;
  check(backend_ != nullptr, "this workspace was not made by a model with activations");
  StepShape grown = capacity_;
  // Grow geometrically so a slowly rising step size does not reallocate every step.
  if (num_tokens > grown.max_tokens) grown.max_tokens = std::max(num_tokens, grown.max_tokens * 3 / 2);
  if (num_logits > grown.max_logits) grown.max_logits = std::max(num_logits, grown.max_logits * 3 / 2);

  const int64_t t = grown.max_tokens, l = grown.max_logits;
  const bool moe = dims_.num_experts > 0;
  constexpr size_t kAlignFloats = kernels::kBufferAlignment / sizeof(float);
  size_t offset = 0;  // in floats
  std::vector<std::pair<float**, size_t>> slices;
  auto slice = [&](float** p, int64_t num_floats) {
    slices.emplace_back(p, offset);
    offset += (size_t(num_floats) + kAlignFloats - 1) / kAlignFloats * kAlignFloats;
  };
  Activations a;
  slice(&a.x, t * dims_.hidden);
  slice(&a.h, t * dims_.hidden);
  slice(&a.y, t * dims_.hidden);
  slice(&a.q, t * dims_.q_dim);
  slice(&a.k, t * dims_.kv_dim);
  slice(&a.v, t * dims_.kv_dim);
  slice(&a.attn, t * dims_.q_dim);
  if (dims_.attn_scratch > 0) slice(&a.attn_scratch, t * dims_.attn_scratch);
  slice(&a.ffn_gate, t * dims_.ffn_dim);
  slice(&a.ffn_up, t * dims_.ffn_dim);
  if (moe) {
    slice(&a.router, t * dims_.num_experts);
    slice(&a.expert_in, t * dims_.hidden);
    slice(&a.expert_out, t * dims_.hidden);
  }
  slice(&a.last, l * dims_.hidden);

  arena_.reset();  // free first: the old contents are not needed, and peak memory stays one arena
  arena_ = backend_->allocate(offset * sizeof(float));
  for (auto [p, off] : slices) *p = arena_.f32() + off;
  act_ = a;
  capacity_ = grown;
}

}  // namespace llmesh::model
