#include "model/blocks/feed_forward.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "core/error.h"
#include "model/weight_store.h"

namespace llmesh::model {

namespace {
constexpr float kClampedSwigluAlpha = 1.702f;  // gpt-oss's: sigmoid(1.702 x) approximates GELU's gate
}  // namespace

DenseFfn::DenseFfn(const WeightStore& weights, const std::string& prefix, int64_t hidden,
                   int64_t intermediate, const ModelShard& shard, float swiglu_limit)
    : partial_(shard.tp_size > 1), swiglu_limit_(swiglu_limit) {
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
  if (swiglu_limit_ > 0) {
    backend.clamped_swiglu(gate, up, gate, n, kClampedSwigluAlpha, swiglu_limit_);
  } else {
    backend.silu_mul(gate, up, gate, n);
  }
  down_.apply(backend, gate, out, num_tokens);
}

MoeFfn::MoeFfn(const ModelConfig& config, const WeightStore& weights, int64_t layer, const ModelShard& shard)
    : config_(config), router_(config, weights, layer), expert_begin_(shard.expert_begin) {
  const std::string prefix = "blk." + std::to_string(layer) + ".";
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
                                                  config.hidden_size, config.moe_intermediate_size, expert_shard,
                                                  config.swiglu_limit));
  }
  // Shared experts are never split by expert: with tensor parallel each lane takes its slice of
  // their columns; with expert parallel alone (tp 1) lane 0 computes them whole, the other lanes
  // skip them, and the stage's sum adds them once.
  if (config.num_shared_experts > 0 && (shard.tp_size > 1 || shard.lane == 0)) {
    shared_ = std::make_unique<DenseFfn>(weights, prefix + "ffn_{}_shexp", config.hidden_size,
                                         config.shared_expert_intermediate(), shard);
  }
  partial_ = subset || shard.tp_size > 1;
}

void MoeFfn::forward(kernels::Backend& backend, const float* h, float* out, int64_t num_tokens,
                     Workspace& ws) const {
  const int64_t hidden = config_.hidden_size, num_experts = config_.num_experts;
  const int64_t top_k = config_.num_experts_per_token;
  const Activations& a = ws.act();
  router_.route(backend, h, num_tokens, ws);  // each token's top-k experts and weights

  // The same grouped by expert (a counting sort, so each expert's tokens stay in ascending order).
  MoeRouting& r = ws.moe();
  r.expert_offsets.assign(size_t(num_experts + 1), 0);
  for (const int32_t e : r.choice) ++r.expert_offsets[size_t(e) + 1];
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
  if (shared_) {
    shared_->forward(backend, h, a.expert_out, num_tokens, ws);  // every token, weight 1
    backend.add_inplace(out, a.expert_out, num_tokens * hidden);
  }
}

}  // namespace llmesh::model
