// Small AVX2 math helpers shared by the fast kernels (exp, tail masks, reductions, transpose).
// Include only from *_avx2.cpp files, after their own includes.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include "kernels/cpu/avx2_target.h"

LLMESH_AVX2_BEGIN

namespace llmesh::kernels::avx2 {

// Lane mask (all ones / zero per 32-bit lane) of the first min(max(count, 0), 8) lanes, for
// _mm256_maskload_ps / _mm256_maskstore_ps (which never touch the memory of masked-off lanes).
static inline __m256i first_lanes(int64_t count) {
  const int c = count >= 8 ? 8 : count <= 0 ? 0 : int(count);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(c), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static inline float reduce_add(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehdup_ps(t)));
}

static inline float reduce_max(__m256 v) {
  const __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_max_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_max_ss(t, _mm_movehdup_ps(t)));
}

// Sum of the 8 int32 lanes of each of 4 vectors, as f32: {sum a, sum b, sum c, sum d}. Summed in
// int32 (exact), then converted.
static inline __m128 reduce_add_4(__m256i a, __m256i b, __m256i c, __m256i d) {
  const __m256i ab = _mm256_hadd_epi32(a, b), cd = _mm256_hadd_epi32(c, d);  // pairs, per 128-bit half
  const __m256i abcd = _mm256_hadd_epi32(ab, cd);                            // quads, per half
  const __m128i sum = _mm_add_epi32(_mm256_castsi256_si128(abcd), _mm256_extracti128_si256(abcd, 1));
  return _mm_cvtepi32_ps(sum);
}

// Software prefetch distance for a tile streaming `num_rows` consecutive weight rows: the same
// offset in the rows of a tile ahead, at least ~8 KiB ahead (see vec_math_avx512.h: the hardware
// prefetcher ramps up too slowly on short row streams).
static inline size_t prefetch_distance(size_t row_bytes, int num_rows) {
  const size_t tile_bytes = size_t(num_rows) * row_bytes;
  const size_t num_tiles = (8192 + tile_bytes - 1) / tile_bytes;
  return num_tiles * tile_bytes;
}

// e^x for 8 lanes, relative error ~2e-7 where the result is a normal float, over the f32 range.
// Results below FLT_MIN (x < -87.33) are flushed to 0, so exp(-inf) = 0 and no lane ever computes
// with denormals (slow on many CPUs); x > 88.72 gives e^88.72 ~ 3.4e38, no inf; NaN gives 0.
// e^x = 2^n * e^r with n = round(x / ln2) and |r| <= ln2/2, e^r by a degree-6 Taylor polynomial,
// and 2^n added to the exponent bits of e^r (AVX2 has no scalef): exact while the result is normal.
static inline __m256 exp_ps(__m256 x) {
  const __m256 normal = _mm256_cmp_ps(x, _mm256_set1_ps(-87.33f), _CMP_GE_OQ);
  x = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(88.72f)), _mm256_set1_ps(-87.33f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // r = x - n * ln2, with ln2 split in two so the product is exact enough (Cody-Waite).
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.428606765330187045e-06f), r);
  __m256 p = _mm256_set1_ps(1.0f / 720.0f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  // p is in [0.70, 1.42] and the clamps keep p * 2^n within [FLT_MIN, FLT_MAX].
  const __m256i scaled = _mm256_add_epi32(_mm256_castps_si256(p), _mm256_slli_epi32(_mm256_cvtps_epi32(n), 23));
  return _mm256_and_ps(_mm256_castsi256_ps(scaled), normal);
}

// In-register transpose of an 8 x 8 f32 block: on return v[j][i] = old v[i][j].
__attribute__((always_inline)) static inline void transpose8x8(__m256 v[8]) {
  __m256 t[8], u[8];
  // Interleave 32-bit elements of row pairs, then 64-bit pairs of row quads: afterwards u[4q + c]'s
  // 128-bit half L holds column 4L + c of rows 4q..4q+3.
#pragma GCC unroll 8
  for (int m = 0; m < 4; ++m) {
    t[2 * m] = _mm256_unpacklo_ps(v[2 * m], v[2 * m + 1]);
    t[2 * m + 1] = _mm256_unpackhi_ps(v[2 * m], v[2 * m + 1]);
  }
#pragma GCC unroll 8
  for (int q = 0; q < 2; ++q) {
    u[4 * q + 0] = _mm256_shuffle_ps(t[4 * q], t[4 * q + 2], 0x44);
    u[4 * q + 1] = _mm256_shuffle_ps(t[4 * q], t[4 * q + 2], 0xee);
    u[4 * q + 2] = _mm256_shuffle_ps(t[4 * q + 1], t[4 * q + 3], 0x44);
    u[4 * q + 3] = _mm256_shuffle_ps(t[4 * q + 1], t[4 * q + 3], 0xee);
  }
  // Swap 128-bit halves between u[c] (rows 0..3) and u[4 + c] (rows 4..7).
#pragma GCC unroll 8
  for (int c = 0; c < 4; ++c) {
    v[c] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x20);
    v[4 + c] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x31);
  }
}

}  // namespace llmesh::kernels::avx2

LLMESH_AVX2_END
