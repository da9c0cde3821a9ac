// AVX-512 VNNI matmul for many tokens (prefill) with block-quantized weights whose values are
// scale * q - min per block of 32 (16 for Q6_K), q an unsigned byte: Q8_0 (q = w + 128, min =
// 128 d), Q4_0 (q = nibble, min = 8 d), Q4_K / Q5_K (q = 4 or 5 bits, scale d sc_j, min dmin m_j),
// Q6_K (q = 6 bits, scale d sc_j, min 32 scale) and IQ4_XS (q = code book + 128, min = 128 scale).
// The other block types use f32 panels.
//
// x is quantized once per call to int8 (per 32 values, or per 256 against 256-value super-blocks:
// d = amax / 127, q = round(x / d), ties to even), with d_x and d_x * sum(q_x) per block. A thread
// unpacks a panel of 16 weight rows once into VNNI order (per block, one vector per 4 inputs: lane
// r holds 4 consecutive q of row r) with the per-row scale and min vectors, then a register tile of
// 16 rows x 8 tokens walks it: per block of 32 and token, 8 vpdpbusd (512 multiply-adds) on x
// broadcast 4 bytes at a time, then
//   y[t][r] += d_x (scale_r * dot(q_r, q_x)) - min_r * d_x * sum(q_x).
// The int32 dot of one block cannot overflow (32 * 255 * 127).
//
// The result equals the reference on x rounded per block to d * round(x / d)
// (matmul_quantizes_activations), up to f32 summation order.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "kernels/cpu/avx512_ops.h"
#include "kernels/cpu/vec_math_avx512.h"
#include "kernels/cpu/avx512_target.h"

LLMESH_AVX512_BEGIN

#include "kernels/cpu/int8_gemm_panels.h"

namespace llmesh::kernels::avx512 {

namespace {

using cpu::Panel;
using cpu::XScale;

constexpr int kPanelRows = 16;
constexpr int kTokenTile = 8;

// y[t][0..16) = panel rows . x[t] for t < T, blocks of 4 * kGroups values; mask cuts the panel's
// missing rows.
template <int kGroups, int T>
void gemm_tile(const Panel& p, int64_t num_blocks, const int8_t* xq, int64_t num_in, const XScale* xs, float* y,
               int64_t y_stride, int64_t num_rows) {
  const __mmask16 mask = first_lanes(num_rows);
  __m512 acc[T];
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
  const int32_t* wq = p.q.data();
  for (int64_t b = 0; b < num_blocks; ++b) {
    __m512i w[kGroups];
#pragma GCC unroll 8
    for (int g = 0; g < kGroups; ++g) w[g] = _mm512_loadu_si512(wq + (b * kGroups + g) * kPanelRows);
    const __m512 scale = _mm512_loadu_ps(p.scale.data() + b * kPanelRows);
    const __m512 min = _mm512_loadu_ps(p.min.data() + b * kPanelRows);
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const int8_t* x = xq + t * num_in + b * 4 * kGroups;
      __m512i dot = _mm512_setzero_si512();
#pragma GCC unroll 8
      for (int g = 0; g < kGroups; ++g) {
        int32_t four;
        std::memcpy(&four, x + 4 * g, 4);
        dot = _mm512_dpbusd_epi32(dot, w[g], _mm512_set1_epi32(four));
      }
      const XScale s = xs[t * num_blocks + b];
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(scale, _mm512_set1_ps(s.d)), acc[t]);
      acc[t] = _mm512_fnmadd_ps(min, _mm512_set1_ps(s.d_sum), acc[t]);
    }
  }
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) _mm512_mask_storeu_ps(y + t * y_stride, mask, acc[t]);
}

template <int kGroups, int... Ts>
constexpr auto make_tile_table(std::integer_sequence<int, Ts...>) {
  return std::array<cpu::GemmTileFn, sizeof...(Ts)>{&gemm_tile<kGroups, Ts + 1>...};
}
// kTiles<G>[n - 1]: n tokens.
template <int kGroups>
constexpr auto kTiles = make_tile_table<kGroups>(std::make_integer_sequence<int, kTokenTile>{});

template <DType D>
void gemm(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool) {
  const int64_t unit = cpu::Unpack<D>::kUnitBlocks * cpu::Unpack<D>::kBlock;
  cpu::run_gemm<D, kPanelRows>(w, x, y, num_tokens, unit, kTiles<cpu::Unpack<D>::kBlock / 4>, pool);
}

}  // namespace

bool has_int8_gemm(DType dtype) {
  return dtype == DType::Q8_0 || dtype == DType::Q4_0 || dtype == DType::Q4_K || dtype == DType::Q5_K ||
         dtype == DType::Q6_K || dtype == DType::IQ4_XS;
}

void matmul_int8_gemm(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool) {
  switch (w.dtype) {
    case DType::Q8_0: return gemm<DType::Q8_0>(w, x, y, num_tokens, pool);
    case DType::Q4_0: return gemm<DType::Q4_0>(w, x, y, num_tokens, pool);
    case DType::Q4_K: return gemm<DType::Q4_K>(w, x, y, num_tokens, pool);
    case DType::Q5_K: return gemm<DType::Q5_K>(w, x, y, num_tokens, pool);
    case DType::Q6_K: return gemm<DType::Q6_K>(w, x, y, num_tokens, pool);
    case DType::IQ4_XS: return gemm<DType::IQ4_XS>(w, x, y, num_tokens, pool);
    default: throw Error(fmt::format("matmul_int8_gemm: {} weights", dtype_name(w.dtype)));
  }
}

}  // namespace llmesh::kernels::avx512

LLMESH_AVX512_END
