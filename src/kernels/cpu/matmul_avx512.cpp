// AVX-512 matmul, y[t, o] = sum_i w[o, i] * x[t, i], three strategies by token count:
//
//  * decode, Q8_0/Q4_0 weights: x quantized to int8, VNNI integer dot products
//    (matmul_int8_avx512.cpp); Q4_K/Q5_K/Q6_K/IQ4_XS likewise against x in Q8_K
//    (matmul_kquants_avx512.cpp). The other block types go to the AVX2 family.
//  * decode, float weights (and up to kPrefillMinTokens tokens): memory-bound.
//    Each weight row is streamed from memory exactly once; 4 rows are converted
//    to f32 in registers per 32-value step and dotted with up to 4 tokens at a time
//    (x stays in L1/L2). f32 FMA against f32 activations: nothing lost to rounding x.
//  * prefill (many tokens, any dtype): compute-bound. Panels of 32 rows x 256 inputs are
//    dequantized and transposed (16 x 16 in registers) into a scratch buffer
//    ([k][32] f32, fits L1), and a 12-token x 32-row register tile (24 accumulators)
//    walks it with broadcast FMAs, so each dequantized weight serves every token.
//
// Work is split across the pool by contiguous ranges of output rows.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "core/error.h"
#include "kernels/cpu/avx2_ops.h"
#include "kernels/cpu/avx512_ops.h"
#include "kernels/ref/ref_ops.h"
#include "kernels/cpu/vec_math_avx512.h"
#include "kernels/cpu/avx512_target.h"

LLMESH_AVX512_BEGIN

namespace llmesh::kernels::avx512 {

namespace {

// ---- weight loaders: 32 consecutive weights of a row as two f32 vectors ------
// load32(row, i, lo, hi): weights [i, i + 32) of the row, i a multiple of 32.
// load_tail(row, i, mask): weights [i, i + 16) under `mask` (plain float types only:
// quantized rows are whole blocks of 32).

template <DType D>
struct WeightLoader;

template <>
struct WeightLoader<DType::F32> {
  static constexpr bool kHasTail = true;
  static size_t byte_offset(int64_t i) { return size_t(i) * 4; }
  static void load32(const uint8_t* row, int64_t i, __m512& lo, __m512& hi) {
    const float* p = reinterpret_cast<const float*>(row) + i;
    lo = _mm512_loadu_ps(p);
    hi = _mm512_loadu_ps(p + 16);
  }
  static __m512 load_tail(const uint8_t* row, int64_t i, __mmask16 mask) {
    return _mm512_maskz_loadu_ps(mask, reinterpret_cast<const float*>(row) + i);
  }
};

template <>
struct WeightLoader<DType::F16> {
  static constexpr bool kHasTail = true;
  static size_t byte_offset(int64_t i) { return size_t(i) * 2; }
  static void load32(const uint8_t* row, int64_t i, __m512& lo, __m512& hi) {
    const uint16_t* p = reinterpret_cast<const uint16_t*>(row) + i;
    lo = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    hi = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16)));
  }
  static __m512 load_tail(const uint8_t* row, int64_t i, __mmask16 mask) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask, reinterpret_cast<const uint16_t*>(row) + i));
  }
};

// bf16 is the top half of an f32: widen to 32 bits and shift left by 16.
inline __m512 bf16x16_to_f32(__m256i bits) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
}

template <>
struct WeightLoader<DType::BF16> {
  static constexpr bool kHasTail = true;
  static size_t byte_offset(int64_t i) { return size_t(i) * 2; }
  static void load32(const uint8_t* row, int64_t i, __m512& lo, __m512& hi) {
    const uint16_t* p = reinterpret_cast<const uint16_t*>(row) + i;
    lo = bf16x16_to_f32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    hi = bf16x16_to_f32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16)));
  }
  static __m512 load_tail(const uint8_t* row, int64_t i, __mmask16 mask) {
    return bf16x16_to_f32(_mm256_maskz_loadu_epi16(mask, reinterpret_cast<const uint16_t*>(row) + i));
  }
};

template <>
struct WeightLoader<DType::Q8_0> {
  static constexpr bool kHasTail = false;
  static size_t byte_offset(int64_t i) { return size_t(i / kQ8_0BlockSize) * sizeof(BlockQ8_0); }
  static void load32(const uint8_t* row, int64_t i, __m512& lo, __m512& hi) {
    const auto* block = reinterpret_cast<const BlockQ8_0*>(row) + i / kQ8_0BlockSize;
    const __m512 d = _mm512_set1_ps(_cvtsh_ss(block->d));
    const __m128i q_lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block->qs));
    const __m128i q_hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block->qs + 16));
    lo = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q_lo)), d);
    hi = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q_hi)), d);
  }
  static __m512 load_tail(const uint8_t*, int64_t, __mmask16) { return _mm512_setzero_ps(); }
};

template <>
struct WeightLoader<DType::Q4_0> {
  static constexpr bool kHasTail = false;
  static size_t byte_offset(int64_t i) { return size_t(i / kQ4_0BlockSize) * sizeof(BlockQ4_0); }
  static void load32(const uint8_t* row, int64_t i, __m512& lo, __m512& hi) {
    const auto* block = reinterpret_cast<const BlockQ4_0*>(row) + i / kQ4_0BlockSize;
    const float d_scalar = _cvtsh_ss(block->d);
    const __m512 d = _mm512_set1_ps(d_scalar);
    const __m512 minus_8d = _mm512_set1_ps(-8.0f * d_scalar);
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block->qs));
    const __m128i low_nibbles = _mm_and_si128(packed, _mm_set1_epi8(0x0f));               // values 0..15
    const __m128i high_nibbles = _mm_and_si128(_mm_srli_epi16(packed, 4), _mm_set1_epi8(0x0f));  // values 16..31
    // d * (q - 8) = q * d - 8d
    lo = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(low_nibbles)), d, minus_8d);
    hi = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(high_nibbles)), d, minus_8d);
  }
  static __m512 load_tail(const uint8_t*, int64_t, __mmask16) { return _mm512_setzero_ps(); }
};

// ---- decode: R rows x T tokens of dot products, weights streamed once ----------

// y[t * y_stride + r] = dot(row r, x[t]) for r < R, t < T. Rows are row_bytes apart.
template <DType D, int R, int T>
void dot_tile(const uint8_t* rows, size_t row_bytes, const float* x, int64_t num_in, float* y,
              int64_t y_stride) {
  using Loader = WeightLoader<D>;
  __m512 acc[R][T];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
  const int64_t num_full = num_in & ~int64_t(31);
  const size_t prefetch_bytes = prefetch_distance(row_bytes);
  for (int64_t i = 0; i < num_full; i += 32) {
    __m512 w_lo[R], w_hi[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const uint8_t* row = rows + size_t(r) * row_bytes;
      _mm_prefetch(reinterpret_cast<const char*>(row + Loader::byte_offset(i) + prefetch_bytes), _MM_HINT_T0);
      Loader::load32(row, i, w_lo[r], w_hi[r]);
    }
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) {
      const __m512 x_lo = _mm512_loadu_ps(x + t * num_in + i);
      const __m512 x_hi = _mm512_loadu_ps(x + t * num_in + i + 16);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) {
        acc[r][t] = _mm512_fmadd_ps(w_lo[r], x_lo, acc[r][t]);
        acc[r][t] = _mm512_fmadd_ps(w_hi[r], x_hi, acc[r][t]);
      }
    }
  }
  if constexpr (Loader::kHasTail) {
    for (int64_t i = num_full; i < num_in; i += 16) {
      const __mmask16 mask = first_lanes(num_in - i);
      __m512 w[R];
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) w[r] = Loader::load_tail(rows + size_t(r) * row_bytes, i, mask);
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t) {
        const __m512 xv = _mm512_maskz_loadu_ps(mask, x + t * num_in + i);
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) acc[r][t] = _mm512_fmadd_ps(w[r], xv, acc[r][t]);
      }
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) y[t * y_stride + r] = _mm512_reduce_add_ps(acc[r][t]);
}

constexpr int kDecodeRows = 4;    // rows per dot tile: x loads shared by 4 rows
constexpr int kDecodeTokens = 4;  // tokens per dot tile: 16 accumulators

template <DType D, int R>
void dot_rows_all_tokens(const uint8_t* rows, size_t row_bytes, const float* x, int64_t num_tokens,
                         int64_t num_in, float* y, int64_t num_out) {
  int64_t t = 0;
  for (; t + kDecodeTokens <= num_tokens; t += kDecodeTokens)
    dot_tile<D, R, kDecodeTokens>(rows, row_bytes, x + t * num_in, num_in, y + t * num_out, num_out);
  switch (num_tokens - t) {
    case 1: dot_tile<D, R, 1>(rows, row_bytes, x + t * num_in, num_in, y + t * num_out, num_out); break;
    case 2: dot_tile<D, R, 2>(rows, row_bytes, x + t * num_in, num_in, y + t * num_out, num_out); break;
    case 3: dot_tile<D, R, 3>(rows, row_bytes, x + t * num_in, num_in, y + t * num_out, num_out); break;
    default: break;
  }
}

template <DType D>
void decode_matmul(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool) {
  const int64_t num_out = w.shape[0], num_in = w.shape[1];
  const size_t row_bytes = w.row_bytes();
  const int64_t num_groups = (num_out + kDecodeRows - 1) / kDecodeRows;
  pool.parallel_for(num_groups, 4, [&](int64_t group_begin, int64_t group_end) {
    const int64_t row_begin = group_begin * kDecodeRows;
    const int64_t row_end = std::min(num_out, group_end * kDecodeRows);
    int64_t o = row_begin;
    for (; o + kDecodeRows <= row_end; o += kDecodeRows)
      dot_rows_all_tokens<D, kDecodeRows>(w.row(o), row_bytes, x, num_tokens, num_in, y + o, num_out);
    for (; o < row_end; ++o) dot_rows_all_tokens<D, 1>(w.row(o), row_bytes, x, num_tokens, num_in, y + o, num_out);
  });
}

// ---- prefill: packed panels and a 12 x 32 register tile ------------------------

constexpr int kPanelRows = 32;     // two vectors of outputs
constexpr int kTokenTile = 12;     // tokens per register tile: 24 accumulators
constexpr int64_t kKBlock = 256;   // inputs per panel: 32 KiB of f32, stays in L1

// Row stride of the dequantized-rows scratch: padded so 16 rows are not 1 KiB apart (L1 set aliasing).
constexpr int64_t kRowsStride = kKBlock + 16;

// D = kAnyBlockType packs the block types without an int8 GEMM (Q4_1, Q5_*, Q2_K, Q3_K, IQ4_NL,
// MXFP4, ...) through their scalar dequantizers: kKBlock is a multiple of every block size, so a chunk is whole blocks.
constexpr DType kAnyBlockType = DType::Q4_K;

// panel[k][r] = w[row_begin + r][k_begin + k] as f32, for k < k_len rounded up to 16, r < 32
// (rows past num_rows and columns past k_len are zero). rows: scratch [32][kRowsStride].
template <DType D>
void pack_panel(const Tensor& w, int64_t row_begin, int64_t num_rows, int64_t k_begin, int64_t k_len,
                float* panel, float* rows) {
  const int64_t k_padded = (k_len + 15) & ~int64_t(15);
  // Dequantize row by row (vector loads/stores), then transpose 16 x 16 blocks in registers.
  for (int64_t r = 0; r < kPanelRows; ++r) {
    float* dst = rows + r * kRowsStride;
    if (r >= num_rows) {
      std::memset(dst, 0, size_t(k_padded) * sizeof(float));
      continue;
    }
    const uint8_t* row = w.row(row_begin + r);
    if constexpr (D == kAnyBlockType) {
      ref::dequantize_row(w.dtype, row + dtype_row_bytes(w.dtype, k_begin), dst, k_len);
    } else {
      using Loader = WeightLoader<D>;
      int64_t k = 0;
      for (; k + 32 <= k_len; k += 32) {
        __m512 lo, hi;
        Loader::load32(row, k_begin + k, lo, hi);
        _mm512_storeu_ps(dst + k, lo);
        _mm512_storeu_ps(dst + k + 16, hi);
      }
      if constexpr (Loader::kHasTail) {
        for (; k < k_padded; k += 16)
          _mm512_storeu_ps(dst + k, Loader::load_tail(row, k_begin + k, first_lanes(k_len - k)));
      }
    }
  }
  for (int64_t r0 = 0; r0 < kPanelRows; r0 += 16) {
    for (int64_t k0 = 0; k0 < k_padded; k0 += 16) {
      __m512 block[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) block[i] = _mm512_loadu_ps(rows + (r0 + i) * kRowsStride + k0);
      transpose16x16(block);
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) _mm512_storeu_ps(panel + (k0 + i) * kPanelRows + r0, block[i]);
    }
  }
}

// y[t][0..32) (+)= sum_k panel[k][..] * x[t][k] for t < T; masks cut the panel's missing rows.
template <int T>
void gemm_tile(const float* panel, int64_t k_len, const float* x, int64_t x_stride, float* y, int64_t y_stride,
               bool accumulate, __mmask16 mask_lo, __mmask16 mask_hi) {
  __m512 acc_lo[T], acc_hi[T];
#pragma GCC unroll 16
  for (int t = 0; t < T; ++t) {
    acc_lo[t] = accumulate ? _mm512_maskz_loadu_ps(mask_lo, y + t * y_stride) : _mm512_setzero_ps();
    acc_hi[t] = accumulate ? _mm512_maskz_loadu_ps(mask_hi, y + t * y_stride + 16) : _mm512_setzero_ps();
  }
  for (int64_t k = 0; k < k_len; ++k) {
    const __m512 w_lo = _mm512_loadu_ps(panel + k * kPanelRows);
    const __m512 w_hi = _mm512_loadu_ps(panel + k * kPanelRows + 16);
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) {
      const __m512 xb = _mm512_set1_ps(x[t * x_stride + k]);
      acc_lo[t] = _mm512_fmadd_ps(w_lo, xb, acc_lo[t]);
      acc_hi[t] = _mm512_fmadd_ps(w_hi, xb, acc_hi[t]);
    }
  }
#pragma GCC unroll 16
  for (int t = 0; t < T; ++t) {
    _mm512_mask_storeu_ps(y + t * y_stride, mask_lo, acc_lo[t]);
    _mm512_mask_storeu_ps(y + t * y_stride + 16, mask_hi, acc_hi[t]);
  }
}

using GemmTileFn = void (*)(const float*, int64_t, const float*, int64_t, float*, int64_t, bool, __mmask16,
                            __mmask16);
template <int... Ts>
constexpr auto make_tile_table(std::integer_sequence<int, Ts...>) {
  return std::array<GemmTileFn, sizeof...(Ts)>{&gemm_tile<Ts + 1>...};
}
// kGemmTiles[n - 1] handles n tokens.
constexpr auto kGemmTiles = make_tile_table(std::make_integer_sequence<int, kTokenTile>{});

// x rows whose byte stride is a multiple of 512 map the 12 rows a tile broadcasts from onto
// a few L1 sets (4 KiB aliasing), where they evict each other and the panel. Such x is
// copied once per call with a padded stride. Returns the stride to use.
int64_t padded_x(const float* x, int64_t num_tokens, int64_t num_in, const float** x_out) {
  if ((num_in * int64_t(sizeof(float))) % 512 != 0) {
    *x_out = x;
    return num_in;
  }
  const int64_t stride = num_in + 16;
  thread_local std::vector<float> buffer;  // [num_tokens, stride]; kept between calls: no page faults per call
  if (buffer.size() < size_t(num_tokens * stride)) buffer.resize(size_t(num_tokens * stride));
  for (int64_t t = 0; t < num_tokens; ++t)
    std::memcpy(buffer.data() + t * stride, x + t * num_in, size_t(num_in) * sizeof(float));
  *x_out = buffer.data();
  return stride;
}

template <DType D>
void prefill_matmul(const Tensor& w, const float* x_in, float* y, int64_t num_tokens, ThreadPool& pool) {
  const int64_t num_out = w.shape[0], num_in = w.shape[1];
  const float* x = nullptr;
  const int64_t x_stride = padded_x(x_in, num_tokens, num_in, &x);
  const int64_t num_panels = (num_out + kPanelRows - 1) / kPanelRows;
  pool.parallel_for(num_panels, 1, [&](int64_t panel_begin, int64_t panel_end) {
    thread_local std::vector<float> panel(size_t(kKBlock * kPanelRows));  // [kKBlock][32]
    thread_local std::vector<float> rows(size_t(kPanelRows * kRowsStride));  // [32][kRowsStride]
    for (int64_t p = panel_begin; p < panel_end; ++p) {
      const int64_t row_begin = p * kPanelRows;
      const int64_t num_rows = std::min<int64_t>(kPanelRows, num_out - row_begin);
      const __mmask16 mask_lo = first_lanes(num_rows);
      const __mmask16 mask_hi = first_lanes(num_rows - 16);
      for (int64_t k_begin = 0; k_begin < num_in; k_begin += kKBlock) {
        const int64_t k_len = std::min(kKBlock, num_in - k_begin);
        pack_panel<D>(w, row_begin, num_rows, k_begin, k_len, panel.data(), rows.data());
        for (int64_t t = 0; t < num_tokens; t += kTokenTile) {
          const int64_t n = std::min<int64_t>(kTokenTile, num_tokens - t);
          kGemmTiles[size_t(n - 1)](panel.data(), k_len, x + t * x_stride + k_begin, x_stride,
                                    y + t * num_out + row_begin, num_out, k_begin > 0, mask_lo, mask_hi);
        }
      }
    }
  });
}

// Below this many tokens, streaming rows (4 x 4 dot tiles, weights dequantized once per 4 tokens)
// beats packing panels: packing costs ~1 cycle per weight, amortized only over many tokens.
// Measured on Zen 5, bf16 3072 x 1024, one thread: dot tiles 165-177 GFLOP/s from 4 to 96 tokens
// (x still in L2), packed panels 143 GFLOP/s at 96 tokens and 178 at 512, dot tiles 120 at 512.
constexpr int64_t kPrefillMinTokens = 128;
// From this many tokens the int8 GEMM (panels unpacked once per 16 rows) beats the streaming int8
// dot tiles, which re-read every weight per 4 tokens.
constexpr int64_t kInt8GemmMinTokens = 16;

template <DType D>
void matmul_typed(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool) {
  if (has_int8_gemm(D))  // Q8_0, Q4_0
    num_tokens < kInt8GemmMinTokens ? matmul_int8(w, x, y, num_tokens, pool) : matmul_int8_gemm(w, x, y, num_tokens, pool);
  else if (num_tokens < kPrefillMinTokens)
    decode_matmul<D>(w, x, y, num_tokens, pool);
  else
    prefill_matmul<D>(w, x, y, num_tokens, pool);
}

}  // namespace

bool matmul_quantizes_activations(DType dtype, int64_t num_tokens) {
  if (has_int8_gemm(dtype)) return true;
  if (has_kquant_matmul(dtype)) return num_tokens < kPrefillMinTokens;
  return dtype_block_size(dtype) > 1 && avx2::matmul_quantizes_activations(dtype, num_tokens);
}

void matmul(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool) {
  switch (w.dtype) {
    case DType::F32: return matmul_typed<DType::F32>(w, x, y, num_tokens, pool);
    case DType::F16: return matmul_typed<DType::F16>(w, x, y, num_tokens, pool);
    case DType::BF16: return matmul_typed<DType::BF16>(w, x, y, num_tokens, pool);
    case DType::Q8_0: return matmul_typed<DType::Q8_0>(w, x, y, num_tokens, pool);
    case DType::Q4_0: return matmul_typed<DType::Q4_0>(w, x, y, num_tokens, pool);
    default: break;
  }
  if (dtype_block_size(w.dtype) == 1) return ref::matmul(w, x, y, num_tokens, pool);  // rejects unknown dtypes
  // Other block types: many tokens through f32 panels; fewer through the super-block integer
  // kernel, or else the AVX2 family (every CPU with these kernels has AVX2), which dequantizes.
  if (has_int8_gemm(w.dtype) && num_tokens >= kInt8GemmMinTokens) return matmul_int8_gemm(w, x, y, num_tokens, pool);
  if (num_tokens >= kPrefillMinTokens) return prefill_matmul<kAnyBlockType>(w, x, y, num_tokens, pool);
  if (has_kquant_matmul(w.dtype)) return matmul_kquants(w, x, y, num_tokens, pool);
  avx2::matmul(w, x, y, num_tokens, pool);
}

}  // namespace llmesh::kernels::avx512

LLMESH_AVX512_END
