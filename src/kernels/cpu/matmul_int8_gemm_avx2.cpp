// AVX2 int8 matmul for many tokens (prefill) with Q4_K, Q5_K or Q6_K weights (the Q*_K_M files):
// the AVX-512 GEMM's scheme (matmul_int8_gemm_avx512.cpp) on 8-row panels (kernels/cpu/
// int8_gemm_panels.h), where each vpdpbusd becomes vpmaddubsw (unsigned q x signed x, pairs added
// into 16 bits) and one vpmaddwd per few groups of 4 inputs. The 16-bit sums cannot saturate:
// a group's pair is at most 2 * q_max * 127, and kGroupsPer16Bits groups are added before widening
// (q_max 15: 8 groups, 31: 4, 63: 2). Q8_0 and IQ4_XS (q up to 255) would saturate: Q8_0 and Q4_0
// keep their own int8 panels (matmul_int8_avx2.cpp, faster for Q4_0), IQ4_XS goes through f32 panels.
//
// The result equals the reference on x rounded per 256 values to d * round(x / d)
// (matmul_quantizes_activations), up to f32 summation order.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "kernels/cpu/avx2_ops.h"
#include "kernels/cpu/avx2_target.h"

LLMESH_AVX2_BEGIN

#include "kernels/cpu/int8_gemm_panels.h"

namespace llmesh::kernels::avx2 {

namespace {

using cpu::Panel;
using cpu::XScale;

constexpr int kPanelRows = 8;
constexpr int kTokenTile = 4;

// y[t][0..8) = panel rows . x[t] for t < T, blocks of 4 * kGroups values; rows past num_rows are
// not stored.
template <int kGroups, int kGroupsPer16Bits, int T>
void gemm_tile(const Panel& p, int64_t num_blocks, const int8_t* xq, int64_t num_in, const XScale* xs, float* y,
               int64_t y_stride, int64_t num_rows) {
  __m256 acc[T];
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
  const __m256i ones = _mm256_set1_epi16(1);
  const int32_t* wq = p.q.data();
  for (int64_t b = 0; b < num_blocks; ++b) {
    __m256i w[kGroups];
#pragma GCC unroll 8
    for (int g = 0; g < kGroups; ++g)
      w[g] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wq + (b * kGroups + g) * kPanelRows));
    const __m256 scale = _mm256_loadu_ps(p.scale.data() + b * kPanelRows);
    const __m256 min = _mm256_loadu_ps(p.min.data() + b * kPanelRows);
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t) {
      const int8_t* x = xq + t * num_in + b * 4 * kGroups;
      __m256i dot = _mm256_setzero_si256();
#pragma GCC unroll 8
      for (int g0 = 0; g0 < kGroups; g0 += kGroupsPer16Bits) {
        __m256i pairs = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int g = g0; g < g0 + kGroupsPer16Bits; ++g) {
          int32_t four;
          std::memcpy(&four, x + 4 * g, 4);
          pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(w[g], _mm256_set1_epi32(four)));
        }
        dot = _mm256_add_epi32(dot, _mm256_madd_epi16(pairs, ones));
      }
      const XScale s = xs[t * num_blocks + b];
      acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(scale, _mm256_set1_ps(s.d)), acc[t]);
      acc[t] = _mm256_fnmadd_ps(min, _mm256_set1_ps(s.d_sum), acc[t]);
    }
  }
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) {
    if (num_rows == kPanelRows) {
      _mm256_storeu_ps(y + t * y_stride, acc[t]);
    } else {
      alignas(32) float out[kPanelRows];
      _mm256_store_ps(out, acc[t]);
      std::copy(out, out + num_rows, y + t * y_stride);
    }
  }
}

template <int kGroups, int kGroupsPer16Bits, int... Ts>
constexpr auto make_tile_table(std::integer_sequence<int, Ts...>) {
  return std::array<cpu::GemmTileFn, sizeof...(Ts)>{&gemm_tile<kGroups, kGroupsPer16Bits, Ts + 1>...};
}

// Groups of 4 whose 16-bit pair sums fit before widening, for quants up to q_max.
constexpr int groups_per_16_bits(DType dtype) { return dtype == DType::Q4_K ? 8 : dtype == DType::Q5_K ? 4 : 2; }

template <DType D>
void gemm(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool) {
  constexpr int kGroups = cpu::Unpack<D>::kBlock / 4;
  static constexpr auto kTiles =
      make_tile_table<kGroups, groups_per_16_bits(D)>(std::make_integer_sequence<int, kTokenTile>{});
  const int64_t unit = cpu::Unpack<D>::kUnitBlocks * cpu::Unpack<D>::kBlock;  // 256: x per super-block
  cpu::run_gemm<D, kPanelRows>(w, x, y, num_tokens, unit, kTiles, pool);
}

}  // namespace

bool has_int8_gemm(DType dtype) { return dtype == DType::Q4_K || dtype == DType::Q5_K || dtype == DType::Q6_K; }

void matmul_int8_gemm(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool) {
  switch (w.dtype) {
    case DType::Q4_K: return gemm<DType::Q4_K>(w, x, y, num_tokens, pool);
    case DType::Q5_K: return gemm<DType::Q5_K>(w, x, y, num_tokens, pool);
    case DType::Q6_K: return gemm<DType::Q6_K>(w, x, y, num_tokens, pool);
    default: throw Error(fmt::format("matmul_int8_gemm: {} weights", dtype_name(w.dtype)));
  }
}

}  // namespace llmesh::kernels::avx2

LLMESH_AVX2_END
