// AVX2 integer matmul for Q8_0 / Q4_0 weights, at every token count.
//
// Dequantizing 4- and 8-bit weights to f32 costs more instructions than the memory
// they come from takes to arrive (and, with many tokens, f32 FMA does 8 products per
// instruction where maddubs does 32), so here x is quantized instead, once per call,
// to int8 blocks of 32 with an f32 scale (GGUF Q8_0 semantics, ties to even), and
// each weight block meets x in 32-byte integer dot products:
//   _mm256_maddubs_epi16 (unsigned bytes x signed bytes, pairs summed into int16),
//   then _mm256_madd_epi16 with ones (pairs of int16 summed into 8 int32 lanes),
//   y += sum_blocks d_w * d_x * sum_j q_w[j] * q_x[j]  (the scales applied in f32).
//   Q8_0: signed x signed: |q_w| (unsigned, up to 128) x q_x carrying q_w's sign
//         (_mm256_sign_epi8); pairs stay within int16 (2 * 128 * 127 < 32767).
//   Q4_0: q_w - 8 = nibble - 8: dot the unsigned nibbles, subtract 8 * sum(q_x)
//         (precomputed with x).
//
// Two shapes of work:
//  * few tokens (< kInt8GemmMinTokens, decode): R rows x T tokens per tile, each weight
//    row streamed from memory once (software prefetch a few KiB ahead: the hardware
//    prefetcher ramps up too slowly on short rows; without it 1-thread gemv drops from
//    7-13 to 4-9 GB/s), each weight block unpacked once and dotted with T <= 4 tokens.
//  * many tokens: 8-row panels of unpacked, interleaved int8 weights and an 8-row x
//    6-token (Q4_0) or 5-token (Q8_0) register tile; see "many tokens" below.
//   Measured (3072 x 1024, one thread, best of interleaved runs), row tiles vs panels:
//   Q4_0 8 tokens 768 vs 876 us, 12: 1160 vs 654, 16: 1553 vs 964; Q8_0 8: 822 vs 811,
//   12: 1412 vs 1361, 16: 1777 vs 1642 -> kInt8GemmMinTokens = 12. At 512 tokens the
//   panels reach 146-158 GFLOP/s (Q4_0) and 95-105 (Q8_0) on a core whose f32 FMA peak is 91.
//
// Adding a block type (say Q4_K or Q6_K against Q8_K-style activations of 256 values
// with an f32 scale and per-16 sums): for few tokens, write one more BlockDot<DType>, with
//   XBlock            the activation block it dots against, and quantize_x() filling it;
//   kBlockValues      values per weight block (= per XBlock);
//   Weights / load()  what one weight block unpacks to, once per row (shared over tokens);
//   fma()             acc + the block's dot product with one XBlock, as 8 f32 partial sums;
// and its case in matmul_int8() and matmul_quantizes_activations() (matmul_avx2.cpp): the
// row/token tiling, threading and prefetching are shared by every block type. For many
// tokens, the K-quants have a GEMM of their own (matmul_int8_gemm_avx2.cpp: a scale and a
// min per sub-block, the min scaled by the sub-block's sum of x).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/cpu/avx2_ops.h"
#include "kernels/cpu/vec_math_avx2.h"

#include "kernels/cpu/avx2_target.h"

LLMESH_AVX2_BEGIN

namespace llmesh::kernels::avx2 {

namespace {

// 32 values of x quantized (Q8_0 semantics with an f32 scale).
struct alignas(32) XBlockQ8 {
  int8_t q[32];
  int32_t sum8[8];  // per int32 lane of a madd result: 8 * the sum of its 4 q bytes (Q4_0's -8 offset)
  float d;
};

inline __m256i ones_epi16() { return _mm256_set1_epi16(1); }

// One token's x[num_in] (num_in a multiple of 32) into num_in / 32 blocks.
void quantize_x_q8(const float* x, int64_t num_in, XBlockQ8* blocks) {
  const __m256 sign_bit = _mm256_set1_ps(-0.0f);
  for (int64_t b = 0; b < num_in / 32; ++b) {
    __m256 v[4];
    __m256 amax = _mm256_setzero_ps();
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      v[c] = _mm256_loadu_ps(x + 32 * b + 8 * c);
      amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign_bit, v[c]));
    }
    const float d = reduce_max(amax) / 127.0f;
    const __m256 inv_d = _mm256_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
    __m256i q[4];
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) q[c] = _mm256_cvtps_epi32(_mm256_mul_ps(v[c], inv_d));  // ties to even
    // Saturating packs work within 128-bit halves; the permute restores the order.
    const __m256i q16_01 = _mm256_packs_epi32(q[0], q[1]), q16_23 = _mm256_packs_epi32(q[2], q[3]);
    const __m256i q8 =
        _mm256_permutevar8x32_epi32(_mm256_packs_epi16(q16_01, q16_23), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    XBlockQ8& out = blocks[b];
    _mm256_store_si256(reinterpret_cast<__m256i*>(out.q), q8);
    const __m256i sum8 = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(8), q8), ones_epi16());
    _mm256_store_si256(reinterpret_cast<__m256i*>(out.sum8), sum8);
    out.d = d;
  }
}

template <DType D>
struct BlockDot;

template <>
struct BlockDot<DType::Q8_0> {
  using XBlock = XBlockQ8;
  static constexpr int kBlockValues = 32;
  static constexpr size_t kBlockBytes = sizeof(BlockQ8_0);
  static void quantize_x(const float* x, int64_t num_in, XBlock* blocks) { quantize_x_q8(x, num_in, blocks); }

  struct Weights {
    __m256i abs_q, q;
    __m256 d;
  };
  static Weights load(const uint8_t* row, int64_t block) {
    const auto* b = reinterpret_cast<const BlockQ8_0*>(row) + block;
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->qs));
    return {_mm256_abs_epi8(q), q, _mm256_set1_ps(_cvtsh_ss(b->d))};
  }
  static __m256 fma(const Weights& w, const XBlock& x, __m256 acc) {
    const __m256i signed_x = _mm256_sign_epi8(_mm256_load_si256(reinterpret_cast<const __m256i*>(x.q)), w.q);
    const __m256i dot = _mm256_madd_epi16(_mm256_maddubs_epi16(w.abs_q, signed_x), ones_epi16());
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(w.d, _mm256_broadcast_ss(&x.d)), acc);
  }
};

template <>
struct BlockDot<DType::Q4_0> {
  using XBlock = XBlockQ8;
  static constexpr int kBlockValues = 32;
  static constexpr size_t kBlockBytes = sizeof(BlockQ4_0);
  static void quantize_x(const float* x, int64_t num_in, XBlock* blocks) { quantize_x_q8(x, num_in, blocks); }

  struct Weights {
    __m256i nibbles;  // values 0..31 in order, 0..15 each
    __m256 d;
  };
  static Weights load(const uint8_t* row, int64_t block) {
    const auto* b = reinterpret_cast<const BlockQ4_0*>(row) + block;
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs));
    // Byte j holds value j (low nibble) and value j + 16 (high nibble).
    const __m256i both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
    return {_mm256_and_si256(both, _mm256_set1_epi8(0x0f)), _mm256_set1_ps(_cvtsh_ss(b->d))};
  }
  static __m256 fma(const Weights& w, const XBlock& x, __m256 acc) {
    const __m256i xq = _mm256_load_si256(reinterpret_cast<const __m256i*>(x.q));
    const __m256i dot = _mm256_sub_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(w.nibbles, xq), ones_epi16()),
                                         _mm256_load_si256(reinterpret_cast<const __m256i*>(x.sum8)));
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(w.d, _mm256_broadcast_ss(&x.d)), acc);
  }
};

// ---- few tokens: R rows x T tokens, each weight block unpacked once per T tokens ----

// y[t * y_stride + r] = row r . x[t] for r < R, t < T. xs: [T][num_blocks].
template <DType D, int R, int T>
void int8_dot_tile(const uint8_t* rows, size_t row_bytes, const typename BlockDot<D>::XBlock* xs, int64_t num_blocks,
                   float* y, int64_t y_stride) {
  using Dot = BlockDot<D>;
  __m256 acc[R][T];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
  const size_t prefetch_bytes = prefetch_distance(row_bytes, R);
  for (int64_t b = 0; b < num_blocks; ++b) {
    typename Dot::Weights w[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const uint8_t* row = rows + size_t(r) * row_bytes;
      // One prefetch per 64-byte line: blocks are 18 or 34 bytes.
      const size_t offset = size_t(b) * Dot::kBlockBytes;
      if ((offset & 63) < Dot::kBlockBytes)
        _mm_prefetch(reinterpret_cast<const char*>(row + offset + prefetch_bytes), _MM_HINT_T0);
      w[r] = Dot::load(row, b);
    }
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) {
      const typename Dot::XBlock& xb = xs[t * num_blocks + b];
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) acc[r][t] = Dot::fma(w[r], xb, acc[r][t]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) y[t * y_stride + r] = reduce_add(acc[r][t]);
}

// Rows per tile for T tokens: R * T accumulators and 2-3 registers of unpacked weights per row
// within the 16 ymm registers.
template <int T>
constexpr int kInt8Rows = T == 1 ? 4 : 2;
constexpr int kInt8Tokens = 4;

template <DType D, int T>
void int8_rows(const Tensor& w, const typename BlockDot<D>::XBlock* xs, int64_t num_blocks, float* y, int64_t num_out,
               int64_t row_begin, int64_t row_end) {
  constexpr int R = kInt8Rows<T>;
  const size_t row_bytes = w.row_bytes();
  int64_t o = row_begin;
  for (; o + R <= row_end; o += R) int8_dot_tile<D, R, T>(w.row(o), row_bytes, xs, num_blocks, y + o, num_out);
  for (; o < row_end; ++o) int8_dot_tile<D, 1, T>(w.row(o), row_bytes, xs, num_blocks, y + o, num_out);
}

template <DType D>
void int8_matmul(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool) {
  using Dot = BlockDot<D>;
  using XBlock = typename Dot::XBlock;
  const int64_t num_out = w.shape[0], num_in = w.shape[1];
  const int64_t num_blocks = num_in / Dot::kBlockValues;
  thread_local std::vector<XBlock> xs;  // [num_tokens][num_blocks]; reused across calls
  if (xs.size() < size_t(num_tokens * num_blocks)) xs.resize(size_t(num_tokens * num_blocks));
  for (int64_t t = 0; t < num_tokens; ++t) Dot::quantize_x(x + t * num_in, num_in, xs.data() + t * num_blocks);
  const XBlock* x_blocks = xs.data();
  constexpr int64_t kGroup = 4;  // a multiple of every kInt8Rows: chunk edges fall on whole tiles
  const int64_t num_groups = (num_out + kGroup - 1) / kGroup;
  pool.parallel_for(num_groups, 4, [&](int64_t group_begin, int64_t group_end) {
    const int64_t row_begin = group_begin * kGroup, row_end = std::min(num_out, group_end * kGroup);
    int64_t t = 0;
    for (; t + kInt8Tokens <= num_tokens; t += kInt8Tokens)
      int8_rows<D, kInt8Tokens>(w, x_blocks + t * num_blocks, num_blocks, y + t * num_out, num_out, row_begin, row_end);
    const XBlock* xt = x_blocks + t * num_blocks;
    float* yt = y + t * num_out;
    switch (num_tokens - t) {
      case 1:
        int8_rows<D, 1>(w, xt, num_blocks, yt, num_out, row_begin, row_end);
        break;
      case 2:
        int8_rows<D, 2>(w, xt, num_blocks, yt, num_out, row_begin, row_end);
        break;
      case 3:
        int8_rows<D, 3>(w, xt, num_blocks, yt, num_out, row_begin, row_end);
        break;
      default:
        break;
    }
  });
}

// ---- many tokens: packed int8 panels, an 8-row x T-token register tile --------------------
//
// A panel is 8 weight rows with their blocks unpacked to int8 and interleaved so that one
// 32-byte load holds 4 consecutive weights of each of the 8 rows (q[j][r][0..4) = weights
// [4j, 4j + 4) of row r): one broadcast dword of x then meets all 8 rows, and maddubs + madd
// give each row's 4-product sum in its own int32 lane (the layout VNNI's dpbusd wants, here
// without VNNI). Tokens are packed the same way, T per tile, so a tile's broadcasts read one
// sequential stream.
//   Q4_0: maddubs(nibbles, x) pairs are at most 2 * 15 * 127; a block's 8 steps summed in
//         int16 stay below 16 * 15 * 127 = 30480 < 32767, so the int32 widening (madd) and
//         the -8 offset happen once per block, not per step.
//   Q8_0: |q_w| x sign(q_x, q_w) pairs reach 2 * 128 * 127: widened to int32 every step.

struct alignas(32) PanelBlock {
  int8_t q[8][8][4];  // [step j][row r][4 weights]
  float d[8];         // per row: the block's weight scale
};
static_assert(sizeof(PanelBlock) == 288);

// One 32-value block of x for T tokens, laid out like a panel block.
template <int T>
struct alignas(32) XTile {
  int32_t q[8][T];  // [step j][token]: 4 int8 values
  float d[T];
  int32_t sum8[T];  // 8 * the sum of the block's q (Q4_0's -8 offset)
};

// Tokens per tile: 2T + 4 of the 16 ymm registers for Q4_0 (int16 and f32 accumulators, weights,
// broadcast, product, ones), 2T + 5 for Q8_0 (|w| too, int32 accumulators).
template <DType D>
constexpr int kGemmTokens = D == DType::Q4_0 ? 6 : 5;
constexpr int kGemmRows = 8;
constexpr int64_t kGemmKBlocks = 32;  // blocks per k chunk: a 4-panel group is 36 KiB (L2), a token tile 7.5 KiB (L1)
constexpr int kGemmPanelsPerGroup = 4;

// 32 weights of one block as bytes in order: Q8_0 its signed q, Q4_0 its nibbles.
template <DType D>
inline __m256i unpack_block(const uint8_t* block) {
  if constexpr (D == DType::Q8_0) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(reinterpret_cast<const BlockQ8_0*>(block)->qs));
  } else {
    const __m128i packed =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(reinterpret_cast<const BlockQ4_0*>(block)->qs));
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(packed, 4), packed), _mm256_set1_epi8(0x0f));
  }
}

// panel[b] for b < num_blocks: blocks [block_begin, block_begin + num_blocks) of rows
// [row_begin, row_begin + num_rows), num_rows <= 8 (missing rows are zero). Also prefetches the
// same blocks of the next 8 rows, which the next call packs: the rows' short strided reads are
// otherwise latency-bound (the hardware prefetcher does not follow them).
template <DType D>
void pack_int8_panel(const Tensor& w, int64_t row_begin, int64_t num_rows, int64_t block_begin, int64_t num_blocks,
                     PanelBlock* panel) {
  constexpr size_t kBlockBytes = BlockDot<D>::kBlockBytes;
  const size_t row_bytes = w.row_bytes();
  const uint8_t* first = w.row(row_begin) + size_t(block_begin) * kBlockBytes;
  const int64_t num_next = std::min<int64_t>(8, w.shape[0] - (row_begin + 8));
  for (int64_t r = 0; r < num_next; ++r)
    for (size_t offset = 0; offset < size_t(num_blocks) * kBlockBytes; offset += 64)
      _mm_prefetch(reinterpret_cast<const char*>(first + size_t(8 + r) * row_bytes + offset), _MM_HINT_T0);
  for (int64_t b = 0; b < num_blocks; ++b) {
    __m256 rows[8];
    alignas(16) uint16_t scales[8] = {};  // f16
#pragma GCC unroll 8
    for (int r = 0; r < 8; ++r) {
      if (r < num_rows) {
        const uint8_t* block = first + size_t(r) * row_bytes + size_t(b) * kBlockBytes;
        rows[r] = _mm256_castsi256_ps(unpack_block<D>(block));
        scales[r] = *reinterpret_cast<const uint16_t*>(block);
      } else {
        rows[r] = _mm256_setzero_ps();
      }
    }
    transpose8x8(rows);  // 32-bit lanes: rows[j] lane r = row r's weights [4j, 4j + 4)
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) _mm256_store_ps(reinterpret_cast<float*>(panel[b].q[j]), rows[j]);
    _mm256_store_ps(panel[b].d, _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(scales))));
  }
}

// xs[tile * num_blocks + b]: x quantized (quantize_x_q8) and packed T tokens per tile, zero past num_tokens.
template <int T>
void pack_int8_x(const float* x, int64_t num_tokens, int64_t num_in, std::vector<XTile<T>>& xs) {
  const int64_t num_blocks = num_in / 32, num_tiles = (num_tokens + T - 1) / T;
  xs.resize(size_t(num_tiles * num_blocks));
  thread_local std::vector<XBlockQ8> token_blocks;  // [num_blocks]: one token at a time
  token_blocks.resize(size_t(num_blocks));
  for (int64_t tile = 0; tile < num_tiles; ++tile) {
    for (int t = 0; t < T; ++t) {
      const int64_t token = tile * T + t;
      if (token < num_tokens) quantize_x_q8(x + token * num_in, num_in, token_blocks.data());
      for (int64_t b = 0; b < num_blocks; ++b) {
        XTile<T>& dst = xs[size_t(tile * num_blocks + b)];
        if (token >= num_tokens) {
          for (int j = 0; j < 8; ++j) dst.q[j][t] = 0;
          dst.d[t] = 0.0f;
          dst.sum8[t] = 0;
          continue;
        }
        const XBlockQ8& src = token_blocks[size_t(b)];
        int32_t sum8 = 0;
        for (int j = 0; j < 8; ++j) {
          std::memcpy(&dst.q[j][t], src.q + 4 * j, 4);
          sum8 += src.sum8[j];
        }
        dst.d[t] = src.d;
        dst.sum8[t] = sum8;
      }
    }
  }
}

// y[t * y_stride + r] (+)= panel rows . x[t] over num_blocks blocks, for r < num_rows, t < num_tokens <= T.
template <DType D, int T>
void int8_gemm_tile(const PanelBlock* __restrict panel, const XTile<T>* __restrict xs, int64_t num_blocks, float* y,
                    int64_t y_stride, bool accumulate, int64_t num_rows, int64_t num_tokens) {
  const __m256i ones = ones_epi16();
  __m256 acc[T];
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < num_blocks; ++b) {
    const PanelBlock& wb = panel[b];
    const XTile<T>& xb = xs[b];
    __m256i dot[T];  // Q4_0: int16 pair sums; Q8_0: int32 row sums
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) dot[t] = _mm256_setzero_si256();
#pragma GCC unroll 1
    for (int j = 0; j < 8; ++j) {
      const __m256i wq = _mm256_load_si256(reinterpret_cast<const __m256i*>(wb.q[j]));
      if constexpr (D == DType::Q4_0) {
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t)
          dot[t] = _mm256_add_epi16(dot[t], _mm256_maddubs_epi16(wq, _mm256_set1_epi32(xb.q[j][t])));
      } else {
        const __m256i w_abs = _mm256_abs_epi8(wq);
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) {
          const __m256i x_signed = _mm256_sign_epi8(_mm256_set1_epi32(xb.q[j][t]), wq);
          dot[t] = _mm256_add_epi32(dot[t], _mm256_madd_epi16(_mm256_maddubs_epi16(w_abs, x_signed), ones));
        }
      }
    }
    const __m256 wd = _mm256_load_ps(wb.d);
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      __m256i sum = dot[t];
      if constexpr (D == DType::Q4_0)
        sum = _mm256_sub_epi32(_mm256_madd_epi16(sum, ones), _mm256_set1_epi32(xb.sum8[t]));
      acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_mul_ps(wd, _mm256_broadcast_ss(&xb.d[t])), acc[t]);
    }
  }
  const __m256i mask = first_lanes(num_rows);
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) {
    if (t >= num_tokens) break;
    float* yt = y + t * y_stride;
    if (num_rows == kGemmRows) {  // vmaskmovps stores are slow on AMD: only for a partial panel
      _mm256_storeu_ps(yt, accumulate ? _mm256_add_ps(_mm256_loadu_ps(yt), acc[t]) : acc[t]);
    } else {
      _mm256_maskstore_ps(yt, mask, accumulate ? _mm256_add_ps(_mm256_maskload_ps(yt, mask), acc[t]) : acc[t]);
    }
  }
}

template <DType D>
void int8_gemm(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool) {
  constexpr int T = kGemmTokens<D>;
  const int64_t num_out = w.shape[0], num_in = w.shape[1];
  const int64_t num_blocks = num_in / 32;
  thread_local std::vector<XTile<T>> x_tiles;  // [tile][num_blocks]; reused across calls
  pack_int8_x<T>(x, num_tokens, num_in, x_tiles);
  const XTile<T>* xs = x_tiles.data();
  const int64_t num_tiles = (num_tokens + T - 1) / T;
  constexpr int64_t kGroupRows = kGemmRows * kGemmPanelsPerGroup;
  const int64_t num_groups = (num_out + kGroupRows - 1) / kGroupRows;
  pool.parallel_for(num_groups, 1, [&](int64_t group_begin, int64_t group_end) {
    thread_local std::vector<PanelBlock> panels;  // [kGemmPanelsPerGroup][kGemmKBlocks]
    panels.resize(size_t(kGemmPanelsPerGroup * kGemmKBlocks));
    for (int64_t g = group_begin; g < group_end; ++g) {
      const int64_t group_row_begin = g * kGroupRows;
      const int64_t num_panels =
          std::min<int64_t>(kGemmPanelsPerGroup, (num_out - group_row_begin + kGemmRows - 1) / kGemmRows);
      for (int64_t block_begin = 0; block_begin < num_blocks; block_begin += kGemmKBlocks) {
        const int64_t n = std::min(kGemmKBlocks, num_blocks - block_begin);
        for (int64_t p = 0; p < num_panels; ++p) {
          const int64_t row_begin = group_row_begin + p * kGemmRows;
          pack_int8_panel<D>(w, row_begin, std::min<int64_t>(kGemmRows, num_out - row_begin), block_begin, n,
                             panels.data() + p * kGemmKBlocks);
        }
        for (int64_t tile = 0; tile < num_tiles; ++tile) {
          const int64_t t = tile * T;
          for (int64_t p = 0; p < num_panels; ++p) {
            const int64_t row_begin = group_row_begin + p * kGemmRows;
            int8_gemm_tile<D, T>(panels.data() + p * kGemmKBlocks, xs + tile * num_blocks + block_begin, n,
                                 y + t * num_out + row_begin, num_out, block_begin > 0,
                                 std::min<int64_t>(kGemmRows, num_out - row_begin),
                                 std::min<int64_t>(T, num_tokens - t));
          }
        }
      }
    }
  });
}

// From this many tokens on, the packed panels beat the row-streaming tiles (measured: see
// matmul_avx2.cpp's header).
constexpr int64_t kInt8GemmMinTokens = 12;

}  // namespace

void matmul_int8(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool) {
  const bool gemm = num_tokens >= kInt8GemmMinTokens;
  if (w.dtype == DType::Q8_0)
    return gemm ? int8_gemm<DType::Q8_0>(w, x, y, num_tokens, pool)
                : int8_matmul<DType::Q8_0>(w, x, y, num_tokens, pool);
  if (w.dtype == DType::Q4_0)
    return gemm ? int8_gemm<DType::Q4_0>(w, x, y, num_tokens, pool)
                : int8_matmul<DType::Q4_0>(w, x, y, num_tokens, pool);
}

}  // namespace llmesh::kernels::avx2

LLMESH_AVX2_END
