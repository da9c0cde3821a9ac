// Feed-forward blocks: the dense SwiGLU MLP and the mixture of SwiGLU experts.
// An architecture picks one per layer.
#pragma once

#include <memory>
#include <vector>

#include "model/blocks/linear.h"
#include "model/model_config.h"

namespace llmesh {

class WeightStore;

class FeedForward {
 public:
  virtual ~FeedForward() = default;
  // h: [num_tokens, hidden] (already normed); out: [num_tokens, hidden].
  virtual void forward(const float* h, float* out, int64_t num_tokens, ThreadPool& pool) = 0;
};

// down(silu(gate(h)) * up(h))
class DenseFfn : public FeedForward {
 public:
  DenseFfn(const WeightStore& weights, const std::string& prefix, int64_t hidden, int64_t intermediate);
  void forward(const float* h, float* out, int64_t num_tokens, ThreadPool& pool) override;

 private:
  Linear gate_, up_, down_;
  std::vector<float> gate_out_, up_out_;  // scratch [num_tokens, intermediate]
};

// Softmax router over all experts, top-k per token (renormalized when
// norm_topk_prob), each chosen expert a SwiGLU MLP; the output is the
// router-weighted sum. Tokens are grouped by expert so each expert's weights
// are read once per step.
class MoeFfn : public FeedForward {
 public:
  MoeFfn(const ModelConfig& config, const WeightStore& weights, int64_t layer);
  void forward(const float* h, float* out, int64_t num_tokens, ThreadPool& pool) override;

 private:
  const ModelConfig& config_;
  Linear router_;                                  // {num_experts, hidden}
  std::vector<std::unique_ptr<DenseFfn>> experts_;
  std::vector<float> router_logits_, gathered_, expert_out_;  // scratch
};

}  // namespace llmesh
