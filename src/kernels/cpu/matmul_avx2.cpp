// AVX2 matmul, y[t, o] = sum_i w[o, i] * x[t, i], by weight dtype and token count:
//
//  * Q8_0/Q4_0 weights, any token count: x quantized to int8, integer dot products
//    (matmul_int8_avx2.cpp): row-streaming tiles for few tokens, packed panels for many.
//  * Q4_K/Q5_K/Q6_K/IQ4_XS, few tokens: integer dots against x in Q8_K (matmul_kquants_avx2.cpp);
//    Q4_K/Q5_K/Q6_K from kInt8GemmMinTokens: the int8 GEMM (matmul_int8_gemm_avx2.cpp). Other
//    block types: rows dequantized once, then the f32 paths.
//  * F32/F16/BF16 weights, few tokens (< kPrefillMinTokens): memory-bound. Each
//    weight row is streamed from memory once; R rows are converted to f32 in
//    registers per 8-value step and dotted with up to 4 tokens at a time (x stays
//    in L1/L2). f32 FMA against f32 activations: nothing lost to rounding x.
//  * F32/F16/BF16 weights, many tokens: compute-bound. Panels of 16 rows x 256 inputs
//    are converted and transposed (8 x 8 in registers) into a scratch buffer
//    ([k][16] f32, 16 KiB: fits L1), x is packed 6 tokens per tile ([k][6]), and a
//    6-token x 16-row register tile (12 accumulators, 2 weight vectors, 1 broadcast:
//    15 of the 16 ymm registers) walks them with broadcast FMAs, so each converted
//    weight serves every token. 4 panels are packed together so a token tile is
//    read from L3 once per 64 rows.
//
// Work is split across the pool by contiguous ranges of output rows.
//
// Measured on a 2-vCPU AMD EPYC (Zen 3, AVX2, 32 KiB L1d, 512 KiB L2; one core peaks at
// 91 GFLOP/s of f32 FMA), one thread, thread CPU time, best of interleaved runs on a shared
// (noisy) machine, 3072 x 1024 weights unless noted:
//   f32 register tile alone, data in L1: 87-91 GFLOP/s; the whole packed path, bf16, 512 tokens:
//   65-75 GFLOP/s.
//   bf16 dot tiles vs packed panels: 32 tokens 3.3 vs 4.0 ms, 64: 6.9 vs 7.5, 96: 8.7 vs 8.6,
//   128: 12.1 vs 11.2 -> kPrefillMinTokens = 96.
//   Q8_0/Q4_0 through f32 panels (dequantized) vs the int8 path, GFLOP/s:
//     Q4_0  32 tokens 62 vs 123, 128: 78 vs 146, 512: 83 vs 158 (1024 x 3072: 61 vs 148)
//     Q8_0  32 tokens 54 vs 59,  128: 77 vs 99,  512: 81 vs 105 (1024 x 3072: 67 vs 102)
//   so Q8_0/Q4_0 always take the int8 path (and round x to int8 blocks at every token count).
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "core/error.h"
#include "kernels/cpu/avx2_ops.h"
#include "kernels/cpu/vec_math_avx2.h"
#include "kernels/ref/ref_ops.h"

#include "kernels/cpu/avx2_target.h"

LLMESH_AVX2_BEGIN

namespace llmesh::kernels::avx2 {

namespace {

// ---- weight loaders (float types) ----------------------------------------------------
// load8(row, i): weights [i, i + 8) of a row as f32, i a multiple of 8.
// load_tail(row, i, count): weights [i, i + count), count < 8, the rest zero.

template <DType D>
struct WeightLoader;

template <>
struct WeightLoader<DType::F32> {
  static size_t byte_offset(int64_t i) { return size_t(i) * 4; }
  static __m256 load8(const uint8_t* row, int64_t i) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + i);
  }
  static __m256 load_tail(const uint8_t* row, int64_t i, int64_t count) {
    return _mm256_maskload_ps(reinterpret_cast<const float*>(row) + i, first_lanes(count));
  }
};

template <>
struct WeightLoader<DType::F16> {
  static size_t byte_offset(int64_t i) { return size_t(i) * 2; }
  static __m256 load8(const uint8_t* row, int64_t i) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * i)));
  }
  static __m256 load_tail(const uint8_t* row, int64_t i, int64_t count) {
    uint16_t bits[8] = {};
    std::memcpy(bits, row + 2 * i, size_t(count) * 2);
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bits)));
  }
};

// bf16 is the top half of an f32: widen to 32 bits and shift left by 16.
inline __m256 bf16x8_to_f32(__m128i bits) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
}

template <>
struct WeightLoader<DType::BF16> {
  static size_t byte_offset(int64_t i) { return size_t(i) * 2; }
  static __m256 load8(const uint8_t* row, int64_t i) {
    return bf16x8_to_f32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * i)));
  }
  static __m256 load_tail(const uint8_t* row, int64_t i, int64_t count) {
    uint16_t bits[8] = {};
    std::memcpy(bits, row + 2 * i, size_t(count) * 2);
    return bf16x8_to_f32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bits)));
  }
};

// ---- few tokens, float weights: R rows x T tokens of dot products, weights streamed once ----

// y[t * y_stride + r] = dot(row r, x[t]) for r < R, t < T. Rows are row_bytes apart.
// R * T accumulators + R weight vectors + 1 x vector must fit the 16 ymm registers.
template <DType D, int R, int T>
void dot_tile(const uint8_t* rows, size_t row_bytes, const float* x, int64_t num_in, float* y, int64_t y_stride) {
  using Loader = WeightLoader<D>;
  __m256 acc[R][T];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
  const int64_t num_full = num_in & ~int64_t(7);
  const size_t prefetch_bytes = prefetch_distance(row_bytes, R);
  for (int64_t i = 0; i < num_full; i += 8) {
    __m256 w[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const uint8_t* row = rows + size_t(r) * row_bytes;
      // One prefetch per 64-byte line of each row.
      if ((Loader::byte_offset(i) & 63) == 0)
        _mm_prefetch(reinterpret_cast<const char*>(row + Loader::byte_offset(i) + prefetch_bytes), _MM_HINT_T0);
      w[r] = Loader::load8(row, i);
    }
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) {
      const __m256 xv = _mm256_loadu_ps(x + t * num_in + i);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) acc[r][t] = _mm256_fmadd_ps(w[r], xv, acc[r][t]);
    }
  }
  if (num_full < num_in) {
    const int64_t count = num_in - num_full;
    __m256 w[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) w[r] = Loader::load_tail(rows + size_t(r) * row_bytes, num_full, count);
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) {
      const __m256 xv = _mm256_maskload_ps(x + t * num_in + num_full, first_lanes(count));
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) acc[r][t] = _mm256_fmadd_ps(w[r], xv, acc[r][t]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) y[t * y_stride + r] = reduce_add(acc[r][t]);
}

// Rows per dot tile for T tokens: R * T + R + 1 <= 16 registers.
template <int T>
constexpr int kDecodeRows = T == 1   ? 4
                            : T == 2 ? 4
                                     : 3;
constexpr int kDecodeTokens = 4;  // tokens per dot tile

// The rows [row_begin, row_end) for all tokens, T tokens at a time.
template <DType D, int T>
void dot_rows(const Tensor& w, const float* x, int64_t num_in, float* y, int64_t num_out, int64_t row_begin,
              int64_t row_end) {
  constexpr int R = kDecodeRows<T>;
  const size_t row_bytes = w.row_bytes();
  int64_t o = row_begin;
  for (; o + R <= row_end; o += R) dot_tile<D, R, T>(w.row(o), row_bytes, x, num_in, y + o, num_out);
  for (; o < row_end; ++o) dot_tile<D, 1, T>(w.row(o), row_bytes, x, num_in, y + o, num_out);
}

template <DType D>
void decode_matmul(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool) {
  const int64_t num_out = w.shape[0], num_in = w.shape[1];
  constexpr int64_t kGroup = 12;  // a multiple of every kDecodeRows: chunk edges fall on whole tiles
  const int64_t num_groups = (num_out + kGroup - 1) / kGroup;
  pool.parallel_for(num_groups, 2, [&](int64_t group_begin, int64_t group_end) {
    const int64_t row_begin = group_begin * kGroup, row_end = std::min(num_out, group_end * kGroup);
    int64_t t = 0;
    for (; t + kDecodeTokens <= num_tokens; t += kDecodeTokens)
      dot_rows<D, kDecodeTokens>(w, x + t * num_in, num_in, y + t * num_out, num_out, row_begin, row_end);
    const float* xt = x + t * num_in;
    float* yt = y + t * num_out;
    switch (num_tokens - t) {
      case 1:
        dot_rows<D, 1>(w, xt, num_in, yt, num_out, row_begin, row_end);
        break;
      case 2:
        dot_rows<D, 2>(w, xt, num_in, yt, num_out, row_begin, row_end);
        break;
      case 3:
        dot_rows<D, 3>(w, xt, num_in, yt, num_out, row_begin, row_end);
        break;
      default:
        break;
    }
  });
}

// ---- prefill: packed panels and a 6 x 16 register tile ---------------------------

constexpr int kPanelRows = 16;    // two vectors of outputs
constexpr int kTokenTile = 6;     // tokens per register tile: 12 accumulators
constexpr int64_t kKBlock = 256;  // inputs per panel: 16 KiB of f32, stays in L1

// Row stride of the dequantized-rows scratch: padded so the 8 rows of a transpose are not 1 KiB
// apart (L1 set aliasing).
constexpr int64_t kRowsStride = kKBlock + 8;

// panel[k][r] = w[row_begin + r][k_begin + k] as f32, for k < k_len rounded up to 8, r < 16
// (rows past num_rows and columns past k_len are zero). rows: scratch [16][kRowsStride].
// Also prefetches the same columns of the next 16 rows, which the next call packs: short strided
// row reads are otherwise latency-bound (the hardware prefetcher does not follow them).
// D = kAnyBlockType packs any block-quantized w.dtype through its scalar dequantizer (kKBlock is
// a multiple of every block size, so a chunk is whole blocks).
constexpr DType kAnyBlockType = DType::Q4_K;
constexpr bool is_float_dtype(DType d) { return d == DType::F32 || d == DType::F16 || d == DType::BF16; }

template <DType D>
void pack_panel(const Tensor& w, int64_t row_begin, int64_t num_rows, int64_t k_begin, int64_t k_len, float* panel,
                float* rows) {
  const int64_t k_padded = (k_len + 7) & ~int64_t(7);
  const size_t row_bytes = w.row_bytes();
  const uint8_t* first = w.row(row_begin);
  size_t chunk_begin, chunk_bytes;
  if constexpr (is_float_dtype(D)) {
    chunk_begin = WeightLoader<D>::byte_offset(k_begin), chunk_bytes = WeightLoader<D>::byte_offset(k_len);
  } else {
    chunk_begin = dtype_row_bytes(w.dtype, k_begin), chunk_bytes = dtype_row_bytes(w.dtype, k_len);
  }
  const int64_t num_next = std::min<int64_t>(kPanelRows, w.shape[0] - (row_begin + kPanelRows));
  for (int64_t r = 0; r < num_next; ++r)
    for (size_t offset = 0; offset < chunk_bytes; offset += 64)
      _mm_prefetch(reinterpret_cast<const char*>(first + size_t(kPanelRows + r) * row_bytes + chunk_begin + offset),
                   _MM_HINT_T0);
  // Dequantize row by row (vector loads/stores), then transpose 8 x 8 blocks in registers.
  for (int64_t r = 0; r < kPanelRows; ++r) {
    float* dst = rows + r * kRowsStride;
    if (r >= num_rows) {
      std::memset(dst, 0, size_t(k_padded) * sizeof(float));
      continue;
    }
    const uint8_t* row = first + size_t(r) * row_bytes;
    if constexpr (is_float_dtype(D)) {
      using Loader = WeightLoader<D>;
      int64_t k = 0;
      for (; k + 8 <= k_len; k += 8) _mm256_storeu_ps(dst + k, Loader::load8(row, k_begin + k));
      if (k < k_len) _mm256_storeu_ps(dst + k, Loader::load_tail(row, k_begin + k, k_len - k));
    } else {
      ref::dequantize_row(w.dtype, row + chunk_begin, dst, k_len);  // whole blocks: k_len = k_padded
    }
  }
  for (int64_t r0 = 0; r0 < kPanelRows; r0 += 8) {
    for (int64_t k0 = 0; k0 < k_padded; k0 += 8) {
      __m256 block[8];
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) block[i] = _mm256_loadu_ps(rows + (r0 + i) * kRowsStride + k0);
      transpose8x8(block);
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) _mm256_storeu_ps(panel + (k0 + i) * kPanelRows + r0, block[i]);
    }
  }
}

// y[t][0..num_rows) (+)= sum_k panel[k][..] * x[k][t] for t < T (num_rows <= 16); x is a packed
// token tile, [k][kTokenTile]. Full panels use plain loads and stores: vmaskmovps stores are slow
// on AMD (microcoded).
template <int T>
void gemm_tile(const float* panel, int64_t k_len, const float* x, float* y, int64_t y_stride, bool accumulate,
               int64_t num_rows) {
  const bool full = num_rows == kPanelRows;
  const __m256i mask_lo = first_lanes(num_rows), mask_hi = first_lanes(num_rows - 8);
  __m256 acc_lo[T], acc_hi[T];
#pragma GCC unroll 16
  for (int t = 0; t < T; ++t) {
    if (!accumulate) {
      acc_lo[t] = acc_hi[t] = _mm256_setzero_ps();
    } else if (full) {
      acc_lo[t] = _mm256_loadu_ps(y + t * y_stride);
      acc_hi[t] = _mm256_loadu_ps(y + t * y_stride + 8);
    } else {
      acc_lo[t] = _mm256_maskload_ps(y + t * y_stride, mask_lo);
      acc_hi[t] = _mm256_maskload_ps(y + t * y_stride + 8, mask_hi);
    }
  }
  for (int64_t k = 0; k < k_len; ++k) {
    const __m256 w_lo = _mm256_loadu_ps(panel + k * kPanelRows);
    const __m256 w_hi = _mm256_loadu_ps(panel + k * kPanelRows + 8);
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) {
      const __m256 xb = _mm256_broadcast_ss(x + k * kTokenTile + t);
      acc_lo[t] = _mm256_fmadd_ps(w_lo, xb, acc_lo[t]);
      acc_hi[t] = _mm256_fmadd_ps(w_hi, xb, acc_hi[t]);
    }
  }
#pragma GCC unroll 16
  for (int t = 0; t < T; ++t) {
    if (full) {
      _mm256_storeu_ps(y + t * y_stride, acc_lo[t]);
      _mm256_storeu_ps(y + t * y_stride + 8, acc_hi[t]);
    } else {
      _mm256_maskstore_ps(y + t * y_stride, mask_lo, acc_lo[t]);
      _mm256_maskstore_ps(y + t * y_stride + 8, mask_hi, acc_hi[t]);
    }
  }
}

using GemmTileFn = void (*)(const float*, int64_t, const float*, float*, int64_t, bool, int64_t);
template <int... Ts>
constexpr auto make_tile_table(std::integer_sequence<int, Ts...>) {
  return std::array<GemmTileFn, sizeof...(Ts)>{&gemm_tile<Ts + 1>...};
}
// kGemmTiles[n - 1] handles n tokens.
constexpr auto kGemmTiles = make_tile_table(std::make_integer_sequence<int, kTokenTile>{});

// x as token tiles: packed[tile][k][kTokenTile] = x[tile * kTokenTile + t][k] (zero past num_tokens).
// A tile's broadcasts then read one sequential stream instead of six rows that may alias in L1.
const float* pack_x(const float* x, int64_t num_tokens, int64_t num_in) {
  const int64_t num_tiles = (num_tokens + kTokenTile - 1) / kTokenTile;
  thread_local std::vector<float> packed;  // kept between calls: no page faults per call
  packed.resize(size_t(num_tiles * num_in * kTokenTile));
  for (int64_t tile = 0; tile < num_tiles; ++tile) {
    float* dst = packed.data() + tile * num_in * kTokenTile;
    for (int t = 0; t < kTokenTile; ++t) {
      const int64_t token = tile * kTokenTile + t;
      if (token < num_tokens) {
        const float* src = x + token * num_in;
        for (int64_t k = 0; k < num_in; ++k) dst[k * kTokenTile + t] = src[k];
      } else {
        for (int64_t k = 0; k < num_in; ++k) dst[k * kTokenTile + t] = 0.0f;
      }
    }
  }
  return packed.data();
}

// Panels packed together per k block: their 4 x 16 KiB stay in L2 while each 6-token tile of x
// (6 KiB, in L1) meets all of them, so x is read from L3 once per 64 rows, not per 16.
constexpr int kPanelsPerGroup = 4;

template <DType D>
void prefill_matmul(const Tensor& w, const float* x_in, float* y, int64_t num_tokens, ThreadPool& pool) {
  const int64_t num_out = w.shape[0], num_in = w.shape[1];
  const float* x = pack_x(x_in, num_tokens, num_in);
  constexpr int64_t kGroupRows = kPanelRows * kPanelsPerGroup;
  const int64_t num_groups = (num_out + kGroupRows - 1) / kGroupRows;
  pool.parallel_for(num_groups, 1, [&](int64_t group_begin, int64_t group_end) {
    thread_local std::vector<float> panels(size_t(kPanelsPerGroup * kKBlock * kPanelRows));  // [4][kKBlock][16]
    thread_local std::vector<float> rows(size_t(kPanelRows * kRowsStride));                  // [16][kRowsStride]
    for (int64_t g = group_begin; g < group_end; ++g) {
      const int64_t group_row_begin = g * kGroupRows;
      const int64_t num_panels =
          std::min<int64_t>(kPanelsPerGroup, (num_out - group_row_begin + kPanelRows - 1) / kPanelRows);
      for (int64_t k_begin = 0; k_begin < num_in; k_begin += kKBlock) {
        const int64_t k_len = std::min(kKBlock, num_in - k_begin);
        for (int64_t p = 0; p < num_panels; ++p) {
          const int64_t row_begin = group_row_begin + p * kPanelRows;
          pack_panel<D>(w, row_begin, std::min<int64_t>(kPanelRows, num_out - row_begin), k_begin, k_len,
                        panels.data() + p * kKBlock * kPanelRows, rows.data());
        }
        for (int64_t t = 0; t < num_tokens; t += kTokenTile) {
          const int64_t n = std::min<int64_t>(kTokenTile, num_tokens - t);
          for (int64_t p = 0; p < num_panels; ++p) {
            const int64_t row_begin = group_row_begin + p * kPanelRows;
            kGemmTiles[size_t(n - 1)](panels.data() + p * kKBlock * kPanelRows, k_len,
                                      x + (t * num_in + k_begin * kTokenTile), y + t * num_out + row_begin, num_out,
                                      k_begin > 0, std::min<int64_t>(kPanelRows, num_out - row_begin));
          }
        }
      }
    }
  });
}

// Below this many tokens, streaming rows (dot tiles, weights converted once per 4 tokens) beats
// packing panels (measured: see the header).
constexpr int64_t kPrefillMinTokens = 96;
// From this many tokens the K-quant int8 GEMM (panels unpacked once per 8 rows) beats the
// super-block dot kernel, which re-unpacks every weight per 4 tokens. (Q4_0 keeps the int8 panels
// of matmul_int8_avx2.cpp: 195 against the GEMM's 168 GFLOP/s at 128 tokens, 146 against 94 at 16.)
constexpr int64_t kInt8GemmMinTokens = 16;

template <DType D>
void float_matmul(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool) {
  if (num_tokens < kPrefillMinTokens)
    decode_matmul<D>(w, x, y, num_tokens, pool);
  else
    prefill_matmul<D>(w, x, y, num_tokens, pool);
}

// Weights with no AVX2 kernel of their own (Q2_K, Q3_K, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4): each
// tile of kRows rows is dequantized to f32 once (the scalar dequantizer), then dotted with every
// token by f32 FMA, one x load serving the whole tile. f32 numerics, like the reference.
void dequantizing_matmul(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool) {
  constexpr int64_t kRows = 8;
  const int64_t num_out = w.shape[0], num_in = w.shape[1];
  pool.parallel_for(num_out, kRows, [&](int64_t row_begin, int64_t row_end) {
    std::vector<float> rows(size_t(kRows * num_in));  // [kRows][in]; rows past the tile's end stay zero
    for (int64_t r0 = row_begin; r0 < row_end; r0 += kRows) {
      const int64_t n = std::min(kRows, row_end - r0);
      for (int64_t r = 0; r < n; ++r) ref::dequantize_row(w.dtype, w.row(r0 + r), rows.data() + r * num_in, num_in);
      for (int64_t t = 0; t < num_tokens; ++t) {
        const float* xt = x + t * num_in;
        __m256 acc[kRows];
        for (auto& a : acc) a = _mm256_setzero_ps();
        int64_t i = 0;
        for (; i + 8 <= num_in; i += 8) {
          const __m256 xv = _mm256_loadu_ps(xt + i);
#pragma GCC unroll 8
          for (int64_t r = 0; r < kRows; ++r) acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps(&rows[size_t(r * num_in + i)]), xv, acc[r]);
        }
        for (int64_t r = 0; r < n; ++r) {
          float sum = reduce_add(acc[r]);
          for (int64_t j = i; j < num_in; ++j) sum += rows[size_t(r * num_in + j)] * xt[j];
          y[t * num_out + r0 + r] = sum;
        }
      }
    }
  });
}

}  // namespace

// Q8_0/Q4_0 always take the int8 path: at every token count it beats dequantizing to f32
// (numbers in the header).
// So do the super-block types with a kernel of their own (to Q8_K: blocks of 256).
bool matmul_quantizes_activations(DType dtype, int64_t num_tokens) {
  return dtype == DType::Q8_0 || dtype == DType::Q4_0 || has_int8_gemm(dtype) ||
         (has_kquant_matmul(dtype) && num_tokens < kPrefillMinTokens);
}

void matmul(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool) {
  switch (w.dtype) {
    case DType::F32:
      return float_matmul<DType::F32>(w, x, y, num_tokens, pool);
    case DType::F16:
      return float_matmul<DType::F16>(w, x, y, num_tokens, pool);
    case DType::BF16:
      return float_matmul<DType::BF16>(w, x, y, num_tokens, pool);
    case DType::Q8_0:
    case DType::Q4_0:
      return matmul_int8(w, x, y, num_tokens, pool);
    default:
      // Many tokens: f32 panels dequantized once per call beat the K-quant integer kernel, whose
      // 4-token groups re-unpack every super-block (qwen3-0.6B Q4_K, 512 tokens, 2 threads: 35
      // tok/s through matmul_kquants).
      if (has_int8_gemm(w.dtype) && num_tokens >= kInt8GemmMinTokens) return matmul_int8_gemm(w, x, y, num_tokens, pool);
      if (num_tokens >= kPrefillMinTokens) return prefill_matmul<kAnyBlockType>(w, x, y, num_tokens, pool);
      if (has_kquant_matmul(w.dtype)) return matmul_kquants(w, x, y, num_tokens, pool);
      return dequantizing_matmul(w, x, y, num_tokens, pool);
  }
}

}  // namespace llmesh::kernels::avx2

LLMESH_AVX2_END
