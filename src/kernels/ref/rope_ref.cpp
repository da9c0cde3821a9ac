// Reference rotary position embedding.
#include <cmath>
#include <vector>

#include "core/error.h"
#include "kernels/ref/ref_ops.h"

namespace llmesh::kernels::ref {

// Rotates the first rotary_dim dims of each head; the rest pass through (partial rotary).
void rope_inplace(float* x, int64_t num_tokens, int64_t num_heads, int64_t head_dim, int64_t rotary_dim,
                  const int32_t* positions, const float* inv_freq, bool interleaved) {
  check(head_dim % 2 == 0, "rope: head_dim {} must be even", head_dim);
  check(rotary_dim % 2 == 0 && rotary_dim > 0 && rotary_dim <= head_dim,
        "rope: rotary_dim {} must be even and in (0, head_dim {}]", rotary_dim, head_dim);
  const int64_t half = rotary_dim / 2;
  std::vector<float> cos_table(static_cast<size_t>(half)), sin_table(static_cast<size_t>(half));  // [rotary_dim/2], one token at a time
  for (int64_t t = 0; t < num_tokens; ++t) {
    for (int64_t i = 0; i < half; ++i) {
      // The angle in double: positions reach 1e5+, and float rounding of p*f would shift the phase.
      const double angle = double(positions[t]) * double(inv_freq[i]);
      cos_table[size_t(i)] = float(std::cos(angle));
      sin_table[size_t(i)] = float(std::sin(angle));
    }
    for (int64_t h = 0; h < num_heads; ++h) {
      float* v = x + (t * num_heads + h) * head_dim;
      for (int64_t i = 0; i < half; ++i) {
        const int64_t a = interleaved ? 2 * i : i;
        const int64_t b = interleaved ? 2 * i + 1 : i + half;
        const float c = cos_table[size_t(i)], s = sin_table[size_t(i)];
        const float va = v[a], vb = v[b];
        v[a] = va * c - vb * s;
        v[b] = va * s + vb * c;
      }
    }
  }
}

}  // namespace llmesh::kernels::ref
