#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace llmesh::engine {

int32_t argmax(std::span<const float> values) {
  return int32_t(std::max_element(values.begin(), values.end()) - values.begin());
}

Sampler::Sampler(const SamplingParams& params)
    : params_(params), rng_(params.seed ? *params.seed : std::random_device{}()) {}

void Sampler::apply_penalties(std::span<float> logits, std::span<const int32_t> prompt_ids,
                              std::span<const int32_t> output_ids) const {
  const int64_t vocab = int64_t(logits.size());
  auto in_vocab = [&](int32_t id) { return id >= 0 && id < vocab; };
  if (params_.repetition_penalty != 1.0f) {
    std::vector<bool> seen(size_t(vocab), false);
    for (auto ids : {prompt_ids, output_ids})
      for (int32_t id : ids)
        if (in_vocab(id)) seen[size_t(id)] = true;
    for (int64_t i = 0; i < vocab; ++i) {
      if (!seen[size_t(i)]) continue;
      float& l = logits[size_t(i)];
      l = l > 0 ? l / params_.repetition_penalty : l * params_.repetition_penalty;
    }
  }
  if (params_.presence_penalty != 0.0f || params_.frequency_penalty != 0.0f) {
    std::unordered_map<int32_t, int32_t> counts;
    for (int32_t id : output_ids)
      if (in_vocab(id)) ++counts[id];
    for (auto [id, count] : counts)
      logits[size_t(id)] -= params_.presence_penalty + params_.frequency_penalty * float(count);
  }
}

int32_t Sampler::sample(std::span<float> logits, std::span<const int32_t> prompt_ids,
                        std::span<const int32_t> output_ids) {
  apply_penalties(logits, prompt_ids, output_ids);
  const bool greedy = params_.temperature <= 0.0f;
  const float inv_temp = greedy ? 1.0f : 1.0f / params_.temperature;

  if (keep_logprobs_) {
    float max_logit = *std::max_element(logits.begin(), logits.end()) * inv_temp;
    double sum = 0;
    for (float l : logits) sum += std::exp(double(l * inv_temp - max_logit));
    const float log_sum = float(std::log(sum)) + max_logit;
    logprobs_.resize(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) logprobs_[i] = logits[i] * inv_temp - log_sum;
  }
  if (greedy) return argmax(logits);

  // Candidates sorted by logit, truncated by top-k, then by top-p / min-p on the probabilities.
  candidates_.clear();
  candidates_.reserve(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) candidates_.emplace_back(logits[i] * inv_temp, int32_t(i));
  size_t keep = candidates_.size();
  if (params_.top_k > 0 && size_t(params_.top_k) < keep) keep = size_t(params_.top_k);
  auto by_logit = [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; };
  if (keep < candidates_.size()) {
    std::partial_sort(candidates_.begin(), candidates_.begin() + keep, candidates_.end(), by_logit);
    candidates_.resize(keep);
  } else {
    std::sort(candidates_.begin(), candidates_.end(), by_logit);
  }
  const float max_logit = candidates_.front().first;
  double total = 0;
  for (auto& c : candidates_) {
    c.first = std::exp(c.first - max_logit);
    total += c.first;
  }
  if (params_.top_p < 1.0f) {
    double cumulative = 0;
    size_t n = 0;
    while (n < candidates_.size()) {
      cumulative += candidates_[n++].first / total;
      if (cumulative >= params_.top_p) break;
    }
    candidates_.resize(n);
  }
  if (params_.min_p > 0.0f) {
    const float threshold = candidates_.front().first * params_.min_p;  // relative to the top probability
    size_t n = 1;
    while (n < candidates_.size() && candidates_[n].first >= threshold) ++n;
    candidates_.resize(n);
  }
  double remaining = 0;
  for (const auto& c : candidates_) remaining += c.first;
  double r = std::uniform_real_distribution<double>(0.0, remaining)(rng_);
  for (const auto& c : candidates_) {
    r -= c.first;
    if (r <= 0) return c.second;
  }
  return candidates_.back().second;
}

}  // namespace llmesh::engine
