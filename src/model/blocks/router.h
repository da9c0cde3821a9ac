// The MoE router: a linear layer over the hidden state, then each token's top-k
// experts and their weights, written to ws.moe() (choice, choice_weight).
//
//   Softmax (Qwen3-MoE): p = softmax(logits) over all experts; the k largest p;
//     weights p, renormalized to sum 1 when norm_topk_prob.
//   Sigmoid (GLM-4.5, DeepSeek V3): s = sigmoid(logits); choice = s + bias (the
//     score-correction bias, exp_probs_b; zero without one). With n_group > 1 the
//     experts form n_group consecutive groups, a group scores the sum of its two best
//     choice values, and only the topk_group best groups compete; the k largest
//     choice values among their experts win. Weights are s (without the bias) at the
//     winners, renormalized when norm_topk_prob, then times routed_scaling_factor.
// Ties go to the lower expert (or group) id. The selection runs on the host over
// the router's [num_tokens, num_experts] output (ws.act().router).
#pragma once

#include <vector>

#include "kernels/backend.h"
#include "model/blocks/linear.h"
#include "model/model_config.h"
#include "model/workspace.h"

namespace llmesh::model {

class WeightStore;

class Router {
 public:
  // Loads blk.<layer>.ffn_gate_inp (and exp_probs_b.bias when config.router_bias).
  Router(const ModelConfig& config, const WeightStore& weights, int64_t layer);
  // h: [num_tokens, hidden]. Fills ws.moe().choice / choice_weight ([num_tokens * k], best first).
  void route(kernels::Backend& backend, const float* h, int64_t num_tokens, Workspace& ws) const;

 private:
  void select_softmax(const float* probs, int64_t num_tokens, MoeRouting& r) const;
  void select_sigmoid(const float* logits, int64_t num_tokens, MoeRouting& r) const;

  const ModelConfig& config_;
  Linear gate_;              // {num_experts, hidden}
  std::vector<float> bias_;  // [num_experts] or empty
};

}  // namespace llmesh::model
