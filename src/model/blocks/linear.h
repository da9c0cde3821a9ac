// Building blocks shared by the architectures: a linear layer with optional
// bias, and f32 copies of small vectors (norm weights, biases) converted once
// at load from whatever dtype the file stores.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "kernels/backend.h"

namespace llmesh::model {

class WeightStore;

// A small 1-D tensor converted to f32 (norm weights and biases are tiny; the
// kernels want them as plain floats).
std::vector<float> to_f32_vector(const Tensor& t);

// How a tensor-parallel rank takes its part of a linear layer, one of `parts`:
//   Rows — a slice of the output features (q/k/v, gate/up): a view, nothing copied;
//   Cols — a slice of the input features (o_proj, down): a partial sum that the
//          stage adds up; copied, since a column range is not contiguous. The bias,
//          if any, stays with part 0 so the sum adds it once.
enum class LinearSplit { Rows, Cols };

struct LinearPart {
  LinearSplit split = LinearSplit::Rows;
  int index = 0;
  int count = 1;
};

struct Linear {
  Tensor weight;             // {out, in}, any dtype, a view into the mapped file (or into `storage`)
  std::vector<float> bias;   // [out] or empty
  std::shared_ptr<const uint8_t[]> storage;  // owns `weight`'s bytes when they are a copy (a column slice)

  int64_t in_features() const { return weight.cols(); }
  int64_t out_features() const { return weight.rows(); }
  // y[t, :] = weight · x[t, :] (+ bias). x: [num_tokens, in], y: [num_tokens, out].
  void apply(kernels::Backend& backend, const float* x, float* y, int64_t num_tokens) const;

  // Reads `<name>.weight` and, if present, `<name>.bias`; checks the shape.
  static Linear load(const WeightStore& weights, const std::string& name, int64_t out_features,
                     int64_t in_features);
  // This rank's part of the full {out_features, in_features} layer `name`; Error when the
  // features do not divide by part.count, or when a column slice would cut a quantized block.
  static Linear load(const WeightStore& weights, const std::string& name, int64_t out_features,
                     int64_t in_features, const LinearPart& part);
};

// Reads `<name>` as an f32 vector of exactly `size` values.
std::vector<float> load_f32_vector(const WeightStore& weights, const std::string& name, int64_t size);

}  // namespace llmesh::model
