// Reference row and element-wise ops.
#include <algorithm>
#include <cmath>

#include "kernels/ref/ref_ops.h"

namespace llmesh::kernels::ref {

void rmsnorm(const float* x, const float* weight, float* y, int64_t num_rows, int64_t dim, float eps) {
  for (int64_t r = 0; r < num_rows; ++r) {
    const float* x_row = x + r * dim;
    float* y_row = y + r * dim;
    double sum_squares = 0.0;
    for (int64_t i = 0; i < dim; ++i) sum_squares += double(x_row[i]) * double(x_row[i]);
    const float inv_rms = float(1.0 / std::sqrt(sum_squares / double(dim) + double(eps)));
    for (int64_t i = 0; i < dim; ++i) y_row[i] = x_row[i] * inv_rms * weight[i];
  }
}

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void clamped_swiglu(const float* gate, const float* up, float* out, int64_t n, float alpha, float limit) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = std::min(gate[i], limit), u = std::clamp(up[i], -limit, limit);
    out[i] = g / (1.0f + std::exp(-alpha * g)) * (u + 1.0f);
  }
}

void softmax_inplace(float* x, int64_t n) {
  if (n <= 0) return;
  float max_value = x[0];
  for (int64_t i = 1; i < n; ++i) max_value = std::max(max_value, x[i]);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max_value);
    sum += x[i];
  }
  const float inv_sum = float(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv_sum;
}

void add_inplace(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

}  // namespace llmesh::kernels::ref
