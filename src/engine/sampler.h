// Turns one row of logits into a token id.
//
// Order: penalties -> greedy? -> temperature -> top-k -> top-p -> min-p -> draw.
// A Sampler owns its random stream, so a request with a seed draws the same
// tokens whatever else runs in the same batch.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/sampling_params.h"

namespace llmesh::engine {

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);

  // `logits` ([vocab]) is modified in place. `prompt_ids` and `output_ids` feed the penalties.
  int32_t sample(std::span<float> logits, std::span<const int32_t> prompt_ids,
                 std::span<const int32_t> output_ids);

  // Log-probabilities of the last sample()'s distribution after penalties and
  // temperature, before truncation (what OpenAI's `logprobs` reports).
  const std::vector<float>& last_logprobs() const { return logprobs_; }
  void set_keep_logprobs(bool keep) { keep_logprobs_ = keep; }

 private:
  void apply_penalties(std::span<float> logits, std::span<const int32_t> prompt_ids,
                       std::span<const int32_t> output_ids) const;
  SamplingParams params_;
  std::mt19937_64 rng_;
  bool keep_logprobs_ = false;
  std::vector<float> logprobs_;
  std::vector<std::pair<float, int32_t>> candidates_;  // scratch
};

int32_t argmax(std::span<const float> values);

}  // namespace llmesh::engine
