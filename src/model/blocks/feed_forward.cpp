#include "model/blocks/feed_forward.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "kernels/ops.h"
#include "model/weight_store.h"

namespace llmesh {

DenseFfn::DenseFfn(const WeightStore& weights, const std::string& prefix, int64_t hidden,
                   int64_t intermediate) {
  // prefix + "gate" etc.: "blk.3.ffn_" for dense layers, "blk.3.ffn_{}_exps.5" style for experts.
  gate_ = Linear::load(weights, fmt::format(fmt::runtime(prefix), "gate"), intermediate, hidden);
  up_ = Linear::load(weights, fmt::format(fmt::runtime(prefix), "up"), intermediate, hidden);
  down_ = Linear::load(weights, fmt::format(fmt::runtime(prefix), "down"), hidden, intermediate);
}

void DenseFfn::forward(const float* h, float* out, int64_t num_tokens, ThreadPool& pool) {
  const size_t n = size_t(num_tokens * gate_.out_features());
  gate_out_.resize(n);
  up_out_.resize(n);
  gate_.apply(h, gate_out_.data(), num_tokens, pool);
  up_.apply(h, up_out_.data(), num_tokens, pool);
  kernels::silu_mul(gate_out_.data(), up_out_.data(), gate_out_.data(), int64_t(n));
  down_.apply(gate_out_.data(), out, num_tokens, pool);
}

MoeFfn::MoeFfn(const ModelConfig& config, const WeightStore& weights, int64_t layer) : config_(config) {
  const std::string prefix = "blk." + std::to_string(layer) + ".";
  router_ = Linear::load(weights, prefix + "ffn_gate_inp", config.num_experts, config.hidden_size);
  for (int64_t e = 0; e < config.num_experts; ++e) {
    experts_.push_back(std::make_unique<DenseFfn>(
        weights, prefix + "ffn_{}_exps." + std::to_string(e), config.hidden_size, config.moe_intermediate_size));
  }
}

void MoeFfn::forward(const float* h, float* out, int64_t num_tokens, ThreadPool& pool) {
  const int64_t hidden = config_.hidden_size, num_experts = config_.num_experts;
  const int64_t top_k = config_.num_experts_per_token;
  router_logits_.resize(size_t(num_tokens * num_experts));  // [T, num_experts]
  router_.apply(h, router_logits_.data(), num_tokens, pool);

  // For each expert, the tokens routed to it and their weights.
  std::vector<std::vector<int64_t>> tokens_of(static_cast<size_t>(num_experts));
  std::vector<std::vector<float>> weights_of(static_cast<size_t>(num_experts));
  std::vector<int64_t> order(static_cast<size_t>(num_experts));
  for (int64_t t = 0; t < num_tokens; ++t) {
    float* probs = router_logits_.data() + t * num_experts;
    kernels::softmax_inplace(probs, num_experts);
    std::iota(order.begin(), order.end(), 0);
    // Highest probability first; ties by lower expert id, deterministically.
    std::partial_sort(order.begin(), order.begin() + top_k, order.end(), [&](int64_t a, int64_t b) {
      return probs[a] != probs[b] ? probs[a] > probs[b] : a < b;
    });
    float sum = 0;
    for (int64_t i = 0; i < top_k; ++i) sum += probs[order[size_t(i)]];
    for (int64_t i = 0; i < top_k; ++i) {
      const int64_t e = order[size_t(i)];
      tokens_of[size_t(e)].push_back(t);
      weights_of[size_t(e)].push_back(config_.norm_topk_prob ? probs[e] / sum : probs[e]);
    }
  }

  std::memset(out, 0, sizeof(float) * size_t(num_tokens * hidden));
  for (int64_t e = 0; e < num_experts; ++e) {
    const auto& tokens = tokens_of[size_t(e)];
    if (tokens.empty()) continue;
    const int64_t n = int64_t(tokens.size());
    gathered_.resize(size_t(n * hidden));    // [n, hidden]
    expert_out_.resize(size_t(n * hidden));  // [n, hidden]
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(gathered_.data() + i * hidden, h + tokens[size_t(i)] * hidden, sizeof(float) * size_t(hidden));
    experts_[size_t(e)]->forward(gathered_.data(), expert_out_.data(), n, pool);
    for (int64_t i = 0; i < n; ++i) {
      float* dst = out + tokens[size_t(i)] * hidden;
      const float* src = expert_out_.data() + i * hidden;
      const float w = weights_of[size_t(e)][size_t(i)];
      for (int64_t d = 0; d < hidden; ++d) dst[d] += w * src[d];
    }
  }
}

}  // namespace llmesh
