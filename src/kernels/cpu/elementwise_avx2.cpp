// AVX2 row and element-wise ops. Tails use masked loads/stores (maskload/maskstore never touch
// masked-off memory), so any length works.
#include <immintrin.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "kernels/cpu/avx2_ops.h"
#include "kernels/cpu/vec_math_avx2.h"
#include "kernels/ref/ref_ops.h"

#include "kernels/cpu/avx2_target.h"

LLMESH_AVX2_BEGIN

namespace llmesh::kernels::avx2 {

void rmsnorm(const float* x, const float* weight, float* y, int64_t num_rows, int64_t dim, float eps) {
  for (int64_t r = 0; r < num_rows; ++r) {
    const float* x_row = x + r * dim;
    float* y_row = y + r * dim;
    // Four chains hide FMA latency, and four partial sums keep the f32 sum of squares accurate.
    __m256 sum[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    int64_t i = 0;
    for (; i + 32 <= dim; i += 32) {
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) {
        const __m256 a = _mm256_loadu_ps(x_row + i + 8 * c);
        sum[c] = _mm256_fmadd_ps(a, a, sum[c]);
      }
    }
    for (; i < dim; i += 8) {
      const __m256 a = _mm256_maskload_ps(x_row + i, first_lanes(dim - i));
      sum[0] = _mm256_fmadd_ps(a, a, sum[0]);
    }
    const float sum_squares = reduce_add(_mm256_add_ps(_mm256_add_ps(sum[0], sum[1]), _mm256_add_ps(sum[2], sum[3])));
    const __m256 inv_rms = _mm256_set1_ps(1.0f / std::sqrt(sum_squares / float(dim) + eps));
    for (i = 0; i + 8 <= dim; i += 8) {
      const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x_row + i), inv_rms);
      _mm256_storeu_ps(y_row + i, _mm256_mul_ps(v, _mm256_loadu_ps(weight + i)));
    }
    if (i < dim) {
      const __m256i mask = first_lanes(dim - i);
      const __m256 v = _mm256_mul_ps(_mm256_maskload_ps(x_row + i, mask), inv_rms);
      _mm256_maskstore_ps(y_row + i, mask, _mm256_mul_ps(v, _mm256_maskload_ps(weight + i, mask)));
    }
  }
}

namespace {
inline __m256 silu_mul8(__m256 g, __m256 u) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 sigmoid = _mm256_div_ps(one, _mm256_add_ps(one, exp_ps(_mm256_sub_ps(_mm256_setzero_ps(), g))));
  return _mm256_mul_ps(_mm256_mul_ps(g, sigmoid), u);
}
}  // namespace

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, silu_mul8(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
  if (i < n) {
    const __m256i mask = first_lanes(n - i);
    _mm256_maskstore_ps(out + i, mask, silu_mul8(_mm256_maskload_ps(gate + i, mask), _mm256_maskload_ps(up + i, mask)));
  }
}

void softmax_inplace(float* x, int64_t n) {
  if (n <= 0) return;
  const int64_t num_full = n & ~int64_t(7);
  const __m256i tail = first_lanes(n - num_full);
  const __m256 minus_inf = _mm256_set1_ps(-INFINITY);
  __m256 max_v = minus_inf;
  for (int64_t i = 0; i < num_full; i += 8) max_v = _mm256_max_ps(max_v, _mm256_loadu_ps(x + i));
  if (num_full < n)  // masked-off lanes load as 0: replace them by -inf
    max_v = _mm256_max_ps(
        max_v, _mm256_blendv_ps(minus_inf, _mm256_maskload_ps(x + num_full, tail), _mm256_castsi256_ps(tail)));
  const __m256 max_b = _mm256_set1_ps(reduce_max(max_v));
  __m256 sum_v = _mm256_setzero_ps();
  for (int64_t i = 0; i < num_full; i += 8) {
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), max_b));
    sum_v = _mm256_add_ps(sum_v, e);
    _mm256_storeu_ps(x + i, e);
  }
  if (num_full < n) {
    const __m256 e =
        _mm256_and_ps(exp_ps(_mm256_sub_ps(_mm256_maskload_ps(x + num_full, tail), max_b)), _mm256_castsi256_ps(tail));
    sum_v = _mm256_add_ps(sum_v, e);
    _mm256_maskstore_ps(x + num_full, tail, e);
  }
  const __m256 inv_sum = _mm256_set1_ps(1.0f / reduce_add(sum_v));
  for (int64_t i = 0; i < num_full; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), inv_sum));
  if (num_full < n)
    _mm256_maskstore_ps(x + num_full, tail, _mm256_mul_ps(_mm256_maskload_ps(x + num_full, tail), inv_sum));
}

void add_inplace(float* y, const float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(y + i), _mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i mask = first_lanes(n - i);
    _mm256_maskstore_ps(y + i, mask, _mm256_add_ps(_mm256_maskload_ps(y + i, mask), _mm256_maskload_ps(x + i, mask)));
  }
}

// The reference's angles (double, then cos/sin rounded to f32: positions reach 1e5+) and products,
// with the rotation 8 pairs at a time over the first rotary_dim dims (the rest pass through).
// rotary_dim not a multiple of 16 falls back to the reference.
void rope_inplace(float* x, int64_t num_tokens, int64_t num_heads, int64_t head_dim, int64_t rotary_dim,
                  const int32_t* positions, const float* inv_freq, bool interleaved) {
  check(head_dim % 2 == 0, "rope: head_dim {} must be even", head_dim);
  if (rotary_dim % 16 != 0 || rotary_dim > head_dim)
    return ref::rope_inplace(x, num_tokens, num_heads, head_dim, rotary_dim, positions, inv_freq, interleaved);
  const int64_t half = rotary_dim / 2;
  // Neox: cos/sin [half]. Interleaved: each duplicated for its pair, [rotary_dim].
  thread_local std::vector<float> cos_table, sin_table;
  cos_table.resize(size_t(rotary_dim));
  sin_table.resize(size_t(rotary_dim));
  for (int64_t t = 0; t < num_tokens; ++t) {
    for (int64_t i = 0; i < half; ++i) {
      const double angle = double(positions[t]) * double(inv_freq[i]);
      const float c = float(std::cos(angle)), s = float(std::sin(angle));
      if (interleaved) {
        cos_table[size_t(2 * i)] = cos_table[size_t(2 * i + 1)] = c;
        sin_table[size_t(2 * i)] = sin_table[size_t(2 * i + 1)] = s;
      } else {
        cos_table[size_t(i)] = c;
        sin_table[size_t(i)] = s;
      }
    }
    for (int64_t h = 0; h < num_heads; ++h) {
      float* v = x + (t * num_heads + h) * head_dim;
      if (interleaved) {
        // Pairs (2i, 2i + 1): even lanes a*c - b*s, odd lanes b*c + a*s (fmaddsub on the swapped pair).
        for (int64_t i = 0; i < rotary_dim; i += 8) {
          const __m256 ab = _mm256_loadu_ps(v + i);
          const __m256 ba_s = _mm256_mul_ps(_mm256_permute_ps(ab, 0xb1), _mm256_loadu_ps(sin_table.data() + i));
          _mm256_storeu_ps(v + i, _mm256_fmaddsub_ps(ab, _mm256_loadu_ps(cos_table.data() + i), ba_s));
        }
      } else {
        for (int64_t i = 0; i < half; i += 8) {
          const __m256 a = _mm256_loadu_ps(v + i), b = _mm256_loadu_ps(v + half + i);
          const __m256 c = _mm256_loadu_ps(cos_table.data() + i), s = _mm256_loadu_ps(sin_table.data() + i);
          _mm256_storeu_ps(v + i, _mm256_fmsub_ps(a, c, _mm256_mul_ps(b, s)));
          _mm256_storeu_ps(v + half + i, _mm256_fmadd_ps(a, s, _mm256_mul_ps(b, c)));
        }
      }
    }
  }
}

}  // namespace llmesh::kernels::avx2

LLMESH_AVX2_END
