// Small AVX-512 math helpers shared by the fast kernels (exp, masks).
// Include only from *_avx512.cpp files, after their own includes.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include "kernels/cpu/avx512_target.h"

LLMESH_AVX512_BEGIN

namespace llmesh::kernels::avx512 {

// Mask of the first min(count, 16) lanes.
static inline __mmask16 first_lanes(int64_t count) {
  return count >= 16 ? __mmask16(0xffff) : count <= 0 ? __mmask16(0) : __mmask16((1u << count) - 1);
}

// Software prefetch distance for a tile streaming 4 consecutive weight rows: the same offset in
// the rows of a tile ahead, at least ~8 KiB ahead. The hardware prefetcher alone ramps up too
// slowly on short (few KiB) row streams; measured on Zen 5 one thread, this lifts bf16 gemv from
// 17 to 20 GB/s and q4_0 from 12.5 to 15-16 GB/s (on a loaded machine).
static inline size_t prefetch_distance(size_t row_bytes) {
  const size_t tile_bytes = 4 * row_bytes;
  const size_t num_tiles = (8192 + tile_bytes - 1) / tile_bytes;
  return num_tiles * tile_bytes;
}

// e^x for 16 lanes, relative error ~2e-7 where e^x is a normal f32; below that (x < -87.3, e.g.
// exp(-inf) of a masked score) exactly 0, no NaN. Results are never denormal: producing one costs a
// microcode assist on Intel cores, and a softmax over mostly masked lanes (decode attention) then
// ran several times slower.
// e^x = 2^n * e^r with n = round(x / ln2) and |r| <= ln2/2, e^r by a degree-6 Taylor polynomial.
static inline __m512 exp_ps(__m512 x) {
  constexpr float kMinNormalExponent = -87.33f;  // e^x >= FLT_MIN (1.18e-38)
  const __mmask16 normal = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kMinNormalExponent), _CMP_GE_OQ);
  x = _mm512_max_ps(_mm512_min_ps(x, _mm512_set1_ps(88.7f)), _mm512_set1_ps(kMinNormalExponent));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // r = x - n * ln2, with ln2 split in two so the product is exact enough (Cody-Waite).
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187045e-06f), r);
  __m512 p = _mm512_set1_ps(1.0f / 720.0f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_maskz_scalef_ps(normal, p, n);
}

// In-register transpose of a 16 x 16 f32 block: on return v[j][i] = old v[i][j].
__attribute__((always_inline)) static inline void transpose16x16(__m512 v[16]) {
  __m512 t[16], u[16];
  // Interleave 32-bit elements of row pairs, then 64-bit pairs of row quads: afterwards u[4q + c]'s
  // 128-bit lane L holds column 4L + c of rows 4q..4q+3.
#pragma GCC unroll 16
  for (int m = 0; m < 8; ++m) {
    t[2 * m] = _mm512_unpacklo_ps(v[2 * m], v[2 * m + 1]);
    t[2 * m + 1] = _mm512_unpackhi_ps(v[2 * m], v[2 * m + 1]);
  }
#pragma GCC unroll 16
  for (int q = 0; q < 4; ++q) {
    const __m512d a = _mm512_castps_pd(t[4 * q]), b = _mm512_castps_pd(t[4 * q + 2]);
    const __m512d c = _mm512_castps_pd(t[4 * q + 1]), d = _mm512_castps_pd(t[4 * q + 3]);
    u[4 * q + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
    u[4 * q + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    u[4 * q + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, d));
    u[4 * q + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, d));
  }
  // For each c, a 4 x 4 transpose of 128-bit lanes among u[c], u[4 + c], u[8 + c], u[12 + c].
#pragma GCC unroll 16
  for (int c = 0; c < 4; ++c) {
    const __m512 v0 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x44), v1 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xee);
    const __m512 v2 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x44);
    const __m512 v3 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xee);
    v[c] = _mm512_shuffle_f32x4(v0, v2, 0x88);
    v[4 + c] = _mm512_shuffle_f32x4(v0, v2, 0xdd);
    v[8 + c] = _mm512_shuffle_f32x4(v1, v3, 0x88);
    v[12 + c] = _mm512_shuffle_f32x4(v1, v3, 0xdd);
  }
}

}  // namespace llmesh::kernels::avx512

LLMESH_AVX512_END
