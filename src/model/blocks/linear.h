// Building blocks shared by the architectures: a linear layer with optional
// bias, and f32 copies of small vectors (norm weights, biases) converted once
// at load from whatever dtype the file stores.
#pragma once

#include <vector>

#include "core/tensor.h"
#include "kernels/backend.h"

namespace llmesh::model {

class WeightStore;

// A small 1-D tensor converted to f32 (norm weights and biases are tiny; the
// kernels want them as plain floats).
std::vector<float> to_f32_vector(const Tensor& t);

struct Linear {
  Tensor weight;             // {out, in}, any dtype, a view into the mapped file
  std::vector<float> bias;   // [out] or empty

  int64_t in_features() const { return weight.cols(); }
  int64_t out_features() const { return weight.rows(); }
  // y[t, :] = weight · x[t, :] (+ bias). x: [num_tokens, in], y: [num_tokens, out].
  void apply(kernels::Backend& backend, const float* x, float* y, int64_t num_tokens) const;

  // Reads `<name>.weight` and, if present, `<name>.bias`; checks the shape.
  static Linear load(const WeightStore& weights, const std::string& name, int64_t out_features,
                     int64_t in_features);
};

// Reads `<name>` as an f32 vector of exactly `size` values.
std::vector<float> load_f32_vector(const WeightStore& weights, const std::string& name, int64_t size);

}  // namespace llmesh::model
