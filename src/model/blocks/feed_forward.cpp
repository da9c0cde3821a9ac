#include "model/blocks/feed_forward.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "core/error.h"
#include "model/weight_store.h"

namespace llmesh::model {

DenseFfn::DenseFfn(const WeightStore& weights, const std::string& prefix, int64_t hidden,
                   int64_t intermediate, const ModelShard& shard)
    : partial_(shard.tp_size > 1) {
  // prefix + "gate" etc.: "blk.3.ffn_" for dense layers, "blk.3.ffn_{}_exps.5" style for experts.
  const LinearPart columns{LinearSplit::Rows, shard.tp_rank, shard.tp_size};
  gate_ = Linear::load(weights, fmt::format(fmt::runtime(prefix), "gate"), intermediate, hidden, columns);
  up_ = Linear::load(weights, fmt::format(fmt::runtime(prefix), "up"), intermediate, hidden, columns);
  down_ = Linear::load(weights, fmt::format(fmt::runtime(prefix), "down"), hidden, intermediate,
                       {LinearSplit::Cols, shard.tp_rank, shard.tp_size});
}

void DenseFfn::forward(kernels::Backend& backend, const float* h, float* out, int64_t num_tokens,
                       Workspace& ws) const {
  const int64_t n = num_tokens * gate_.out_features();
  float* gate = ws.act().ffn_gate;  // [T, intermediate]
  float* up = ws.act().ffn_up;      // [T, intermediate]
  gate_.apply(backend, h, gate, num_tokens);
  up_.apply(backend, h, up, num_tokens);
  backend.silu_mul(gate, up, gate, n);
  down_.apply(backend, gate, out, num_tokens);
}

MoeFfn::MoeFfn(const ModelConfig& config, const WeightStore& weights, int64_t layer, const ModelShard& shard)
    : config_(config), expert_begin_(shard.expert_begin) {
  const std::string prefix = "blk." + std::to_string(layer) + ".";
  router_ = Linear::load(weights, prefix + "ffn_gate_inp", config.num_experts, config.hidden_size);
  const int64_t expert_end = shard.end_expert(config.num_experts);
  check(0 <= expert_begin_ && expert_begin_ < expert_end && expert_end <= config.num_experts,
        "experts [{}, {}) are not a range of the model's {}", expert_begin_, expert_end, config.num_experts);
  // Expert parallel (a subset of the experts) keeps each expert whole; otherwise
  // tensor parallel slices every expert's columns.
  const bool subset = expert_end - expert_begin_ < config.num_experts;
  ModelShard expert_shard = shard;
  if (subset) expert_shard.tp_rank = 0, expert_shard.tp_size = 1;
  for (int64_t e = expert_begin_; e < expert_end; ++e) {
    experts_.push_back(std::make_unique<DenseFfn>(weights, prefix + "ffn_{}_exps." + std::to_string(e),
                                                  config.hidden_size, config.moe_intermediate_size, expert_shard));
  }
  partial_ = subset || shard.tp_size > 1;
}

void MoeFfn::forward(kernels::Backend& backend, const float* h, float* out, int64_t num_tokens,
                     Workspace& ws) const {
  const int64_t hidden = config_.hidden_size, num_experts = config_.num_experts;
  const int64_t top_k = config_.num_experts_per_token;
  const Activations& a = ws.act();
  float* probs = a.router;  // [T, num_experts]
  router_.apply(backend, h, probs, num_tokens);
  backend.softmax_inplace(probs, num_tokens, num_experts);

  // Each token's top-k experts and weights, then the same grouped by expert
  // (a counting sort, so each expert's tokens stay in ascending order).
  MoeRouting& r = ws.moe();
  r.order.resize(size_t(num_experts));
  r.choice.resize(size_t(num_tokens * top_k));
  r.choice_weight.resize(r.choice.size());
  r.expert_offsets.assign(size_t(num_experts + 1), 0);
  for (int64_t t = 0; t < num_tokens; ++t) {
    const float* p = probs + t * num_experts;
    std::iota(r.order.begin(), r.order.end(), 0);
    // Highest probability first; ties by lower expert id, deterministically.
    std::partial_sort(r.order.begin(), r.order.begin() + top_k, r.order.end(), [&](int32_t x, int32_t y) {
      return p[x] != p[y] ? p[x] > p[y] : x < y;
    });
    float sum = 0;
    for (int64_t i = 0; i < top_k; ++i) sum += p[r.order[size_t(i)]];
    for (int64_t i = 0; i < top_k; ++i) {
      const int32_t e = r.order[size_t(i)];
      r.choice[size_t(t * top_k + i)] = e;
      r.choice_weight[size_t(t * top_k + i)] = config_.norm_topk_prob ? p[e] / sum : p[e];
      ++r.expert_offsets[size_t(e) + 1];
    }
  }
  for (int64_t e = 0; e < num_experts; ++e) r.expert_offsets[size_t(e) + 1] += r.expert_offsets[size_t(e)];
  r.token_ids.resize(r.choice.size());
  r.token_weights.resize(r.choice.size());
  r.order.assign(r.expert_offsets.begin(), r.expert_offsets.end() - 1);  // next free row of each expert
  for (int64_t t = 0; t < num_tokens; ++t) {
    for (int64_t i = 0; i < top_k; ++i) {
      const int32_t e = r.choice[size_t(t * top_k + i)];
      const int32_t row = r.order[size_t(e)]++;
      r.token_ids[size_t(row)] = int32_t(t);
      r.token_weights[size_t(row)] = r.choice_weight[size_t(t * top_k + i)];
    }
  }

  backend.fill(out, 0.0f, num_tokens * hidden);
  for (int64_t e = expert_begin_; e < expert_begin_ + int64_t(experts_.size()); ++e) {
    const int32_t begin = r.expert_offsets[size_t(e)];
    const int64_t n = r.expert_offsets[size_t(e) + 1] - begin;
    if (n == 0) continue;
    backend.copy_rows(h, hidden, r.token_ids.data() + begin, n, a.expert_in);  // [n, hidden]
    experts_[size_t(e - expert_begin_)]->forward(backend, a.expert_in, a.expert_out, n, ws);   // [n, hidden]
    backend.scatter_add_rows(a.expert_out, hidden, r.token_ids.data() + begin, r.token_weights.data() + begin, n,
                             out);
  }
}

}  // namespace llmesh::model
