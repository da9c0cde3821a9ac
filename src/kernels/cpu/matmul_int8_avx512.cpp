// AVX-512 VNNI matmul for Q8_0 / Q4_0 weights with few tokens (decode).
//
// Dequantizing 4-bit weights to f32 costs more instructions than the memory
// they come from takes to arrive, so here x is quantized instead, once per call,
// to int8 blocks of 32 with an f32 scale (GGUF Q8_0 semantics, ties to even), and
// each pair of weight blocks meets x in one 64-byte integer dot product
// (_mm512_dpbusd_epi32: unsigned bytes x signed bytes, 4 products per 32-bit lane):
//   y += sum_blocks d_w * d_x * sum_j q_w[j] * q_x[j]
//   Q4_0: q_w - 8 = nibble - 8: dot the unsigned nibbles, subtract 8 * sum(q_x) (precomputed).
//   Q8_0: signed x signed: dot |q_w| with q_x carrying q_w's sign.
// The per-lane block scales d_w * d_x are applied in f32 after each pair.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/avx512_ops.h"
#include "kernels/cpu/vec_math_avx512.h"
#include "kernels/cpu/avx512_target.h"
#include "kernels/ref/ref_ops.h"

LLMESH_AVX512_BEGIN

namespace llmesh::kernels::avx512 {

namespace {

// x quantized for one pair of 32-value blocks, laid out to line up with how the weights load.
//  Q8_0: q = [block0 0..31 | block1 0..31];           lane l (4 bytes) belongs to block l / 8.
//  Q4_0: q = [b0 0..15 | b1 0..15 | b0 16..31 | b1 16..31]; lane l belongs to block (l / 4) % 2.
struct alignas(64) XPair {
  int8_t q[64];
  float d[16];          // per lane: the x scale of that lane's block
  int32_t sum_x8[16];   // per lane: 8 * the sum of its 4 q bytes (Q4_0's -8 offset)
};
static_assert(sizeof(XPair) == 192);

// Quantizes 32 floats: returns the scale and writes 32 int8.
inline float quantize_block(const float* x, int8_t* q_lo16, int8_t* q_hi16) {
  const __m512 a = _mm512_loadu_ps(x), b = _mm512_loadu_ps(x + 16);
  const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(a), _mm512_abs_ps(b)));
  const float d = amax / 127.0f;
  const __m512 inv_d = _mm512_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(q_lo16), _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(a, inv_d))));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(q_hi16), _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(b, inv_d))));
  return d;
}

// xs[p] for p < num_pairs, from one token's x[num_in]; a missing second block (odd count) is zero.
template <DType D>
void quantize_x(const float* x, int64_t num_in, XPair* xs) {
  const int64_t num_blocks = num_in / 32, num_pairs = (num_blocks + 1) / 2;
  for (int64_t p = 0; p < num_pairs; ++p) {
    XPair& xp = xs[p];
    float d[2] = {0.0f, 0.0f};
    for (int half = 0; half < 2; ++half) {
      const int64_t block = 2 * p + half;
      int8_t* lo = D == DType::Q8_0 ? xp.q + 32 * half : xp.q + 16 * half;       // values 0..15
      int8_t* hi = D == DType::Q8_0 ? xp.q + 32 * half + 16 : xp.q + 32 + 16 * half;  // values 16..31
      if (block < num_blocks) {
        d[half] = quantize_block(x + block * 32, lo, hi);
      } else {
        std::fill(lo, lo + 16, int8_t(0));
        std::fill(hi, hi + 16, int8_t(0));
      }
    }
    for (int lane = 0; lane < 16; ++lane) {
      const int block_half = D == DType::Q8_0 ? lane / 8 : (lane / 4) % 2;
      xp.d[lane] = d[block_half];
      xp.sum_x8[lane] = 8 * (xp.q[4 * lane] + xp.q[4 * lane + 1] + xp.q[4 * lane + 2] + xp.q[4 * lane + 3]);
    }
  }
}

// One pair of weight blocks of a row: q bytes in XPair's layout, and per-lane weight scales.
// `single`: only the first block exists (odd block count, last pair); nothing past it is read.
template <DType D>
inline void load_weight_pair(const uint8_t* row, int64_t pair, bool single, __m512i& q, __m512& d) {
  constexpr size_t kBlockBytes = D == DType::Q8_0 ? sizeof(BlockQ8_0) : sizeof(BlockQ4_0);
  const uint8_t* b0 = row + size_t(2 * pair) * kBlockBytes;
  const uint8_t* b1 = b0 + kBlockBytes;
  uint32_t scales = *reinterpret_cast<const uint16_t*>(b0);
  if (!single) scales |= uint32_t(*reinterpret_cast<const uint16_t*>(b1)) << 16;
  const __m512 d01 = _mm512_castps128_ps512(_mm_cvtph_ps(_mm_cvtsi32_si128(int(scales))));  // [d0, d1, ..]
  if constexpr (D == DType::Q8_0) {
    const __m256i q0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b0 + 2));
    const __m256i q1 = single ? _mm256_setzero_si256() : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b1 + 2));
    q = _mm512_inserti64x4(_mm512_castsi256_si512(q0), q1, 1);
    d = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1), d01);
  } else {
    const __m128i n0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b0 + 2));
    const __m128i n1 = single ? _mm_setzero_si128() : _mm_loadu_si128(reinterpret_cast<const __m128i*>(b1 + 2));
    const __m256i packed = _mm256_inserti128_si256(_mm256_castsi128_si256(n0), n1, 1);  // [b0 | b1] bytes
    const __m512i both = _mm512_inserti64x4(_mm512_castsi256_si512(packed), _mm256_srli_epi16(packed, 4), 1);
    q = _mm512_and_si512(both, _mm512_set1_epi8(0x0f));  // [b0 lo | b1 lo | b0 hi | b1 hi] nibbles
    d = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1), d01);
  }
}


// y[t * y_stride + r] = row r . x[t] for r < R, t < T. xs: [T][num_pairs].
template <DType D, int R, int T>
void int8_dot_tile(const uint8_t* rows, size_t row_bytes, const XPair* xs, int64_t num_pairs, bool odd_blocks,
                   float* y, int64_t y_stride) {
  __m512 acc[R][T];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
  const size_t prefetch_bytes = prefetch_distance(row_bytes);
  for (int64_t p = 0; p < num_pairs; ++p) {
    const bool single = odd_blocks && p == num_pairs - 1;
    __m512i wq[R];
    __m512 wd[R];
    __mmask64 negative[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const uint8_t* row = rows + size_t(r) * row_bytes;
      _mm_prefetch(reinterpret_cast<const char*>(row + size_t(p) * 2 * (D == DType::Q8_0 ? 34 : 18) + prefetch_bytes),
                   _MM_HINT_T0);
      load_weight_pair<D>(row, p, single, wq[r], wd[r]);
      if constexpr (D == DType::Q8_0) {
        negative[r] = _mm512_movepi8_mask(wq[r]);
        wq[r] = _mm512_abs_epi8(wq[r]);
      }
    }
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) {
      const XPair& xp = xs[t * num_pairs + p];
      const __m512i xq = _mm512_load_si512(xp.q);
      const __m512 xd = _mm512_load_ps(xp.d);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) {
        __m512i dot;
        if constexpr (D == DType::Q8_0) {
          const __m512i signed_x = _mm512_mask_sub_epi8(xq, negative[r], _mm512_setzero_si512(), xq);
          dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), wq[r], signed_x);
        } else {
          dot = _mm512_sub_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), wq[r], xq),
                                 _mm512_load_si512(xp.sum_x8));
        }
        acc[r][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(wd[r], xd), acc[r][t]);
      }
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) y[t * y_stride + r] = _mm512_reduce_add_ps(acc[r][t]);
}

template <DType D, int R>
void int8_rows_all_tokens(const uint8_t* rows, size_t row_bytes, const XPair* xs, int64_t num_pairs, bool odd,
                          int64_t num_tokens, float* y, int64_t num_out) {
  int64_t t = 0;
  for (; t + 4 <= num_tokens; t += 4)
    int8_dot_tile<D, R, 4>(rows, row_bytes, xs + t * num_pairs, num_pairs, odd, y + t * num_out, num_out);
  const XPair* xt = xs + t * num_pairs;
  float* yt = y + t * num_out;
  switch (num_tokens - t) {
    case 1: int8_dot_tile<D, R, 1>(rows, row_bytes, xt, num_pairs, odd, yt, num_out); break;
    case 2: int8_dot_tile<D, R, 2>(rows, row_bytes, xt, num_pairs, odd, yt, num_out); break;
    case 3: int8_dot_tile<D, R, 3>(rows, row_bytes, xt, num_pairs, odd, yt, num_out); break;
    default: break;
  }
}

template <DType D>
void int8_matmul(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool) {
  const int64_t num_out = w.shape[0], num_in = w.shape[1];
  const int64_t num_blocks = num_in / 32, num_pairs = (num_blocks + 1) / 2;
  const bool odd = num_blocks % 2 == 1;
  thread_local std::vector<XPair> xs;  // [num_tokens][num_pairs]; reused across calls
  if (xs.size() < size_t(num_tokens * num_pairs)) xs.resize(size_t(num_tokens * num_pairs));
  for (int64_t t = 0; t < num_tokens; ++t) quantize_x<D>(x + t * num_in, num_in, xs.data() + t * num_pairs);
  const XPair* x_pairs = xs.data();
  const size_t row_bytes = w.row_bytes();
  constexpr int kRows = 4;
  const int64_t num_groups = (num_out + kRows - 1) / kRows;
  pool.parallel_for(num_groups, 4, [&](int64_t group_begin, int64_t group_end) {
    const int64_t row_end = std::min(num_out, group_end * kRows);
    int64_t o = group_begin * kRows;
    for (; o + kRows <= row_end; o += kRows)
      int8_rows_all_tokens<D, kRows>(w.row(o), row_bytes, x_pairs, num_pairs, odd, num_tokens, y + o, num_out);
    for (; o < row_end; ++o)
      int8_rows_all_tokens<D, 1>(w.row(o), row_bytes, x_pairs, num_pairs, odd, num_tokens, y + o, num_out);
  });
}

}  // namespace

void matmul_int8(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool) {
  if (w.dtype == DType::Q8_0) return int8_matmul<DType::Q8_0>(w, x, y, num_tokens, pool);
  if (w.dtype == DType::Q4_0) return int8_matmul<DType::Q4_0>(w, x, y, num_tokens, pool);
  ref::matmul(w, x, y, num_tokens, pool);  // callers check matmul_quantizes_activations(); never silently skip
}

}  // namespace llmesh::kernels::avx512

LLMESH_AVX512_END
