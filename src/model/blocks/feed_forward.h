// Feed-forward blocks: the dense SwiGLU MLP and the mixture of SwiGLU experts.
// An architecture picks one per layer.
#pragma once

#include <memory>
#include <vector>

#include "kernels/backend.h"
#include "model/blocks/linear.h"
#include "model/blocks/router.h"
#include "model/model_config.h"
#include "model/model_shard.h"
#include "model/workspace.h"

namespace llmesh::model {

class WeightStore;

class FeedForward {
 public:
  virtual ~FeedForward() = default;
  // h: [num_tokens, hidden] (already normed); out: [num_tokens, hidden]. Scratch comes from `ws`.
  virtual void forward(kernels::Backend& backend, const float* h, float* out, int64_t num_tokens,
                       Workspace& ws) const = 0;
  // The output is this rank's share of a sum over the stage (tensor or expert parallel).
  virtual bool partial() const = 0;
};

// down(silu(gate(h)) * up(h)), or with swiglu_limit > 0 gpt-oss's clamped form of it
// (ModelConfig::swiglu_limit); each projection with its bias where the file has one.
// Scratch: ws.act().ffn_gate, ffn_up.
// With shard.tp_size > 1: this rank's slice of the intermediate columns (a partial sum).
class DenseFfn : public FeedForward {
 public:
  DenseFfn(const WeightStore& weights, const std::string& prefix, int64_t hidden, int64_t intermediate,
           const ModelShard& shard = {}, float swiglu_limit = 0.0f);
  void forward(kernels::Backend& backend, const float* h, float* out, int64_t num_tokens,
               Workspace& ws) const override;
  bool partial() const override { return partial_; }

 private:
  Linear gate_, up_, down_;
  bool partial_;
  float swiglu_limit_;
};

// A Router (model/blocks/router.h: softmax, or sigmoid with bias and expert
// groups) picks each token's top-k experts and weights; each chosen expert is a
// SwiGLU MLP; the output is the router-weighted sum, plus the shared experts
// (config.num_shared_experts > 0: one SwiGLU of moe_intermediate_size * n, on
// every token, weight 1; blk.N.ffn_{gate,up,down}_shexp). Tokens are grouped by
// expert so each expert's weights are read once per step. Scratch:
// ws.act().router, expert_in, expert_out (and the experts' ffn_gate, ffn_up); ws.moe().
// Sharded, every rank routes every token (the router is replicated) and computes
// only its experts [shard.expert_begin, expert_end), each sliced by tensor parallel.
// Shared experts are never split by expert: tensor parallel slices them like a
// dense FFN; with expert parallel alone, lane 0 computes them.
class MoeFfn : public FeedForward {
 public:
  MoeFfn(const ModelConfig& config, const WeightStore& weights, int64_t layer, const ModelShard& shard = {});
  void forward(kernels::Backend& backend, const float* h, float* out, int64_t num_tokens,
               Workspace& ws) const override;
  bool partial() const override { return partial_; }

 private:
  const ModelConfig& config_;
  Router router_;
  int64_t expert_begin_;                           // experts_[i] is expert expert_begin_ + i
  std::vector<std::unique_ptr<DenseFfn>> experts_;
  std::unique_ptr<DenseFfn> shared_;               // the shared experts (this lane's part), or null
  bool partial_;
};

}  // namespace llmesh::model
