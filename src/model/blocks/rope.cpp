#include "model/blocks/rope.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.h"
#include "model/blocks/linear.h"
#include "model/weight_store.h"

namespace llmesh::model {

namespace {

constexpr double kTwoPi = 2 * std::numbers::pi;

// Llama 3.1's frequency-dependent scaling: long wavelengths are stretched by
// `factor`, short ones kept, and the band between interpolated smoothly.
double llama3_scale(double freq, const RopeScaling& s) {
  const double old_ctx = double(s.original_max_position);
  const double low_freq_wavelen = old_ctx / s.low_freq_factor;
  const double high_freq_wavelen = old_ctx / s.high_freq_factor;
  const double wavelen = kTwoPi / freq;
  if (wavelen < high_freq_wavelen) return freq;
  if (wavelen > low_freq_wavelen) return freq / s.factor;
  const double smooth = (old_ctx / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
  return (1 - smooth) * freq / s.factor + smooth * freq;
}

// The (fractional) pair index whose wavelength makes `rotations` turns over the original context.
double yarn_correction_dim(double rotations, double dims, double theta, double original_ctx) {
  return dims * std::log(original_ctx / (rotations * kTwoPi)) / (2 * std::log(theta));
}

// YaRN: pairs below `low` keep their frequency (many turns over the original context),
// pairs above `high` are interpolated (less than a turn), and a linear ramp joins them.
std::vector<double> yarn_inv_freq(const std::vector<double>& base, double theta, int64_t dims,
                                  int64_t original_ctx, const RopeScaling& s) {
  double low = yarn_correction_dim(s.beta_fast, double(dims), theta, double(original_ctx));
  double high = yarn_correction_dim(s.beta_slow, double(dims), theta, double(original_ctx));
  if (s.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, double(dims - 1));
  if (low == high) high += 0.001;  // a ramp of zero width would divide by zero
  std::vector<double> out(base.size());
  for (size_t i = 0; i < base.size(); ++i) {
    const double ramp = std::clamp((double(i) - low) / (high - low), 0.0, 1.0);
    const double extrapolate = (1 - ramp) * s.ext_factor;
    out[i] = base[i] / s.factor * (1 - extrapolate) + base[i] * extrapolate;
  }
  return out;
}

}  // namespace

std::vector<float> rope_inv_freq(const ModelConfig& config, const WeightStore& weights) {
  const int64_t dims = config.rope_dim();  // partial rotary (GLM-4.5): the frequencies run over the rotated dims
  const int64_t half = dims / 2;
  const RopeScaling& s = config.rope_scaling;
  double theta = config.rope_theta;
  if (s.type == "dynamic") {
    theta *= std::pow(double(s.factor) * s.factor - s.factor + 1, double(dims) / double(dims - 2));
  }
  std::vector<double> freq(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) freq[size_t(i)] = std::pow(theta, -2.0 * double(i) / double(dims));
  if (s.type == "linear") {
    for (double& f : freq) f /= s.factor;
  } else if (s.type == "llama3") {
    for (double& f : freq) f = llama3_scale(f, s);
  } else if (s.type == "yarn") {
    freq = yarn_inv_freq(freq, theta, dims, s.original_max_position, s);
  } else if (s.type != "dynamic" && s.enabled()) {
    fail("unsupported rope_scaling type '{}'", s.type);
  }
  if (weights.has("rope_freqs.weight")) {
    const std::vector<float> factors = load_f32_vector(weights, "rope_freqs.weight", half);
    for (int64_t i = 0; i < half; ++i) freq[size_t(i)] /= double(factors[size_t(i)]);
  }
  return std::vector<float>(freq.begin(), freq.end());
}

}  // namespace llmesh::model
