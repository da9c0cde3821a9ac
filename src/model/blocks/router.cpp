#include "model/blocks/router.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "model/weight_store.h"

namespace llmesh::model {

Router::Router(const ModelConfig& config, const WeightStore& weights, int64_t layer) : config_(config) {
  const std::string prefix = "blk." + std::to_string(layer) + ".";
  gate_ = Linear::load(weights, prefix + "ffn_gate_inp", config.num_experts, config.hidden_size);
  if (config.router_bias) bias_ = load_f32_vector(weights, prefix + "exp_probs_b.bias", config.num_experts);
}

void Router::route(kernels::Backend& backend, const float* h, int64_t num_tokens, Workspace& ws) const {
  float* scores = ws.act().router;  // [T, num_experts]
  gate_.apply(backend, h, scores, num_tokens);
  MoeRouting& r = ws.moe();
  const int64_t top_k = config_.num_experts_per_token;
  r.order.resize(size_t(config_.num_experts));
  r.choice.resize(size_t(num_tokens * top_k));
  r.choice_weight.resize(r.choice.size());
  if (config_.router_gating == RouterGating::Softmax) {
    backend.softmax_inplace(scores, num_tokens, config_.num_experts);
    select_softmax(scores, num_tokens, r);
  } else {
    select_sigmoid(scores, num_tokens, r);
  }
}

void Router::select_softmax(const float* probs, int64_t num_tokens, MoeRouting& r) const {
  const int64_t num_experts = config_.num_experts, top_k = config_.num_experts_per_token;
  for (int64_t t = 0; t < num_tokens; ++t) {
    const float* p = probs + t * num_experts;
    std::iota(r.order.begin(), r.order.end(), 0);
    // Highest probability first; ties by lower expert id, deterministically.
    std::partial_sort(r.order.begin(), r.order.begin() + top_k, r.order.end(),
                      [&](int32_t x, int32_t y) { return p[x] != p[y] ? p[x] > p[y] : x < y; });
    float sum = 0;
    for (int64_t i = 0; i < top_k; ++i) sum += p[r.order[size_t(i)]];
    for (int64_t i = 0; i < top_k; ++i) {
      const int32_t e = r.order[size_t(i)];
      r.choice[size_t(t * top_k + i)] = e;
      r.choice_weight[size_t(t * top_k + i)] = (config_.norm_topk_prob ? p[e] / sum : p[e]) * config_.routed_scaling;
    }
  }
}

void Router::select_sigmoid(const float* logits, int64_t num_tokens, MoeRouting& r) const {
  const int64_t num_experts = config_.num_experts, top_k = config_.num_experts_per_token;
  const int64_t num_groups = config_.expert_groups, groups_used = config_.expert_groups_used;
  const int64_t group_size = num_experts / num_groups;
  r.score.resize(size_t(num_experts));  // vectors only grow: no allocation in the steady state
  r.choice_score.resize(size_t(num_experts));
  r.group_score.resize(size_t(num_groups));
  r.groups.resize(size_t(num_groups));
  std::vector<float>& score = r.score;
  std::vector<float>& choice = r.choice_score;
  std::vector<float>& group_score = r.group_score;
  std::vector<int32_t>& groups = r.groups;
  for (int64_t t = 0; t < num_tokens; ++t) {
    const float* l = logits + t * num_experts;
    for (int64_t e = 0; e < num_experts; ++e) {
      score[size_t(e)] = 1.0f / (1.0f + std::exp(-l[e]));
      choice[size_t(e)] = score[size_t(e)] + (bias_.empty() ? 0.0f : bias_[size_t(e)]);
    }
    auto better = [&](int32_t x, int32_t y) {
      return choice[size_t(x)] != choice[size_t(y)] ? choice[size_t(x)] > choice[size_t(y)] : x < y;
    };
    int64_t num_candidates = num_experts;
    if (num_groups > 1) {
      // A group's score: the sum of its two best choice values (groups have >= 2 experts).
      for (int64_t g = 0; g < num_groups; ++g) {
        float best = -INFINITY, second = -INFINITY;
        for (int64_t e = g * group_size; e < (g + 1) * group_size; ++e) {
          const float v = choice[size_t(e)];
          if (v > best) {
            second = best;
            best = v;
          } else if (v > second) {
            second = v;
          }
        }
        group_score[size_t(g)] = best + second;
      }
      std::iota(groups.begin(), groups.end(), 0);
      std::partial_sort(groups.begin(), groups.begin() + groups_used, groups.end(), [&](int32_t x, int32_t y) {
        return group_score[size_t(x)] != group_score[size_t(y)] ? group_score[size_t(x)] > group_score[size_t(y)]
                                                                : x < y;
      });
      // The candidates: the experts of the kept groups only.
      num_candidates = 0;
      for (int64_t i = 0; i < groups_used; ++i) {
        for (int64_t e = groups[size_t(i)] * group_size; e < (groups[size_t(i)] + 1) * group_size; ++e) {
          r.order[size_t(num_candidates++)] = int32_t(e);
        }
      }
    } else {
      std::iota(r.order.begin(), r.order.end(), 0);
    }
    std::partial_sort(r.order.begin(), r.order.begin() + top_k, r.order.begin() + num_candidates, better);
    float sum = 0;
    for (int64_t i = 0; i < top_k; ++i) sum += score[size_t(r.order[size_t(i)])];
    const float scale = config_.norm_topk_prob ? config_.routed_scaling / (sum + 1e-20f) : config_.routed_scaling;
    for (int64_t i = 0; i < top_k; ++i) {
      const int32_t e = r.order[size_t(i)];
      r.choice[size_t(t * top_k + i)] = e;
      r.choice_weight[size_t(t * top_k + i)] = score[size_t(e)] * scale;
    }
  }
}

}  // namespace llmesh::model
