// What a decoder layer's self-attention is to the layer: normed hidden states in,
// the block's output out, this step's keys and values written to the paged KV cache.
// Implementations: Attention (grouped-query, blocks/attention.h) and MlaAttention
// (multi-head latent attention, blocks/mla_attention.h).
#pragma once

#include <cstdint>

#include "kernels/backend.h"
#include "model/workspace.h"

namespace llmesh::model {

// Per-step data every layer's attention reads.
struct AttentionStep {
  kernels::AttentionBatch batch;
  const int64_t* slot_mapping = nullptr;  // [num_tokens]
};

class AttentionBlock {
 public:
  virtual ~AttentionBlock() = default;
  // h: [num_tokens, hidden] (already normed); out: [num_tokens, hidden] (a partial sum when
  // partial()). Writes this step's cache rows into `kv`; scratch comes from `ws`.
  virtual void forward(kernels::Backend& backend, const float* h, float* out, const AttentionStep& step,
                       const kernels::KvLayerView& kv, Workspace& ws) const = 0;
  // The output is this rank's share of a sum over the stage (tensor parallel).
  virtual bool partial() const = 0;
};

}  // namespace llmesh::model
