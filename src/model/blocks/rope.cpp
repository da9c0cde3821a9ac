#include "model/blocks/rope.h"

#include <cmath>
#include <numbers>

#include "core/error.h"
#include "model/blocks/linear.h"
#include "model/weight_store.h"

namespace llmesh::model {

namespace {

// Llama 3.1's frequency-dependent scaling: long wavelengths are stretched by
// `factor`, short ones kept, and the band between interpolated smoothly.
double llama3_scale(double freq, const RopeScaling& s) {
  const double old_ctx = double(s.original_max_position);
  const double low_freq_wavelen = old_ctx / s.low_freq_factor;
  const double high_freq_wavelen = old_ctx / s.high_freq_factor;
  const double wavelen = 2 * std::numbers::pi / freq;
  if (wavelen < high_freq_wavelen) return freq;
  if (wavelen > low_freq_wavelen) return freq / s.factor;
  const double smooth = (old_ctx / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
  return (1 - smooth) * freq / s.factor + smooth * freq;
}

}  // namespace

std::vector<float> rope_inv_freq(const ModelConfig& config, const WeightStore& weights) {
  const int64_t half = config.head_dim / 2;
  std::vector<float> factors;
  if (weights.has("rope_freqs.weight")) factors = load_f32_vector(weights, "rope_freqs.weight", half);
  std::vector<float> inv_freq(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) {
    double freq = std::pow(double(config.rope_theta), -2.0 * double(i) / double(config.head_dim));
    if (config.rope_scaling.type == "llama3") {
      freq = llama3_scale(freq, config.rope_scaling);
    } else if (!config.rope_scaling.type.empty()) {
      fail("unsupported rope_scaling type '{}'", config.rope_scaling.type);
    }
    if (!factors.empty()) freq /= double(factors[size_t(i)]);
    inv_freq[size_t(i)] = float(freq);
  }
  return inv_freq;
}

}  // namespace llmesh::model
