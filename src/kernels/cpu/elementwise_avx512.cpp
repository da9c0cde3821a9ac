// AVX-512 row and element-wise ops. Tails use masked loads/stores, so any length works.
#include <immintrin.h>

#include <cmath>

#include "kernels/cpu/avx512_ops.h"
#include "kernels/cpu/vec_math_avx512.h"
#include "kernels/cpu/avx512_target.h"

LLMESH_AVX512_BEGIN

namespace llmesh::kernels::avx512 {

void rmsnorm(const float* x, const float* weight, float* y, int64_t num_rows, int64_t dim, float eps) {
  for (int64_t r = 0; r < num_rows; ++r) {
    const float* x_row = x + r * dim;
    float* y_row = y + r * dim;
    __m512 sum_a = _mm512_setzero_ps(), sum_b = _mm512_setzero_ps();  // two chains hide FMA latency
    int64_t i = 0;
    for (; i + 32 <= dim; i += 32) {
      const __m512 a = _mm512_loadu_ps(x_row + i), b = _mm512_loadu_ps(x_row + i + 16);
      sum_a = _mm512_fmadd_ps(a, a, sum_a);
      sum_b = _mm512_fmadd_ps(b, b, sum_b);
    }
    for (; i < dim; i += 16) {
      const __m512 a = _mm512_maskz_loadu_ps(first_lanes(dim - i), x_row + i);
      sum_a = _mm512_fmadd_ps(a, a, sum_a);
    }
    const float sum_squares = _mm512_reduce_add_ps(_mm512_add_ps(sum_a, sum_b));
    const __m512 inv_rms = _mm512_set1_ps(1.0f / std::sqrt(sum_squares / float(dim) + eps));
    for (i = 0; i < dim; i += 16) {
      const __mmask16 mask = first_lanes(dim - i);
      const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, x_row + i), inv_rms);
      _mm512_mask_storeu_ps(y_row + i, mask, _mm512_mul_ps(v, _mm512_maskz_loadu_ps(mask, weight + i)));
    }
  }
}

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = first_lanes(n - i);
    const __m512 g = _mm512_maskz_loadu_ps(mask, gate + i);
    const __m512 u = _mm512_maskz_loadu_ps(mask, up + i);
    const __m512 sigmoid = _mm512_div_ps(one, _mm512_add_ps(one, exp_ps(_mm512_sub_ps(_mm512_setzero_ps(), g))));
    _mm512_mask_storeu_ps(out + i, mask, _mm512_mul_ps(_mm512_mul_ps(g, sigmoid), u));
  }
}

void softmax_inplace(float* x, int64_t n) {
  if (n <= 0) return;
  __m512 max_v = _mm512_set1_ps(-INFINITY);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = first_lanes(n - i);
    max_v = _mm512_mask_max_ps(max_v, mask, max_v, _mm512_maskz_loadu_ps(mask, x + i));
  }
  const __m512 max_b = _mm512_set1_ps(_mm512_reduce_max_ps(max_v));
  __m512 sum_v = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = first_lanes(n - i);
    const __m512 e = exp_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(mask, x + i), max_b));
    sum_v = _mm512_mask_add_ps(sum_v, mask, sum_v, e);
    _mm512_mask_storeu_ps(x + i, mask, e);
  }
  const __m512 inv_sum = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum_v));
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = first_lanes(n - i);
    _mm512_mask_storeu_ps(x + i, mask, _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, x + i), inv_sum));
  }
}

void add_inplace(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = first_lanes(n - i);
    _mm512_mask_storeu_ps(y + i, mask, _mm512_add_ps(_mm512_maskz_loadu_ps(mask, y + i), _mm512_maskz_loadu_ps(mask, x + i)));
  }
}

}  // namespace llmesh::kernels::avx512

LLMESH_AVX512_END
