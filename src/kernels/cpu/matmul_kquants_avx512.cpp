// AVX-512 (BW + VNNI) matmul for weights in 256-value super-blocks: Q4_K, Q5_K, Q6_K (the Q*_K_M
// files) and IQ4_XS, for decode and small batches (prefill goes through f32 panels, matmul_avx512.cpp).
//
// x is quantized once per call to Q8_K (per 256 values: d = amax / 127, q = round(x / d), ties to
// even, and the sum of every 16 q), with its quants stored in the order the weight type unpacks
// its own, so that one 64-byte load of x meets one 64-byte register of weight quants:
//   Q4_K, Q5_K: a register of nibbles holds sub-blocks (4c, 4c + 2) or (4c + 1, 4c + 3), c = 0, 1;
//   Q6_K:       64 consecutive values (natural order);
//   IQ4_XS:     one 16-byte lane per sub-block of 32: first halves of 4 sub-blocks, then second halves.
// Products: vpmaddubsw (unsigned weight quants x signed x quants, pairs added; no overflow: q_w <= 63,
// |q_x| <= 127), then vpdpwssd applies the sub-block scale and accumulates in int32. Offsets go
// through the x sums:
//   Q4_K, Q5_K: w = d * sc_j * q - dmin * m_j  ->  w . x = d_x (d sum_j sc_j (q . q_x)_j - dmin sum_j m_j bsum_j)
//   Q6_K:       w = d * sc_j * (q - 32)        ->  w . x = d_x d sum_j sc_j ((q . q_x)_j - 32 bsum_j)
//   IQ4_XS:     w = d * (ls_j - 32) * book[q]: the code book shifted by +128 (unsigned) by byte
//               shuffle, vpdpbusd (int32: no pair overflow), and - 128 bsum_j per sub-block.
// Up to 4 tokens share each unpacked super-block; rows are split over the pool in tiles of 16,
// and a thread walks a tile for each group of tokens so the rows stay in L1/L2 while x streams.
//
// The result equals the reference on x rounded per 256 values to d * round(x / d)
// (matmul_quantizes_activations), up to f32 summation order.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "kernels/cpu/avx512_ops.h"
#include "kernels/cpu/kquant_row_tiles.h"
#include "kernels/cpu/avx512_target.h"

LLMESH_AVX512_BEGIN

namespace llmesh::kernels::avx512 {

namespace {

constexpr int kMaxTokens = 4;  // tokens per pass over a row
constexpr int64_t kRowTile = 16;

// x for one super-block: Q8_K quants in the weight type's order, sums of 16 in natural order.
struct alignas(64) XBlock {
  int16_t bsums[16];
  float d;
  alignas(64) int8_t qs[kQKK];
};

enum class XOrder { Natural, Q45K, IQ4XS };

XOrder x_order_for(DType dtype) {
  return dtype == DType::Q6_K ? XOrder::Natural : dtype == DType::IQ4_XS ? XOrder::IQ4XS : XOrder::Q45K;
}

void quantize_x(const float* x, XBlock* out, XOrder order) {
  __m512 amax = _mm512_setzero_ps();
  for (int i = 0; i < kQKK; i += 16) amax = _mm512_max_ps(amax, _mm512_abs_ps(_mm512_loadu_ps(x + i)));
  const float d = _mm512_reduce_max_ps(amax) / 127.0f;
  const __m512 inv_d = _mm512_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
  out->d = d;
  alignas(64) int8_t q[kQKK];
  for (int i = 0; i < kQKK; i += 16) {
    const __m512i v = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + i), inv_d));
    _mm_store_si128(reinterpret_cast<__m128i*>(q + i), _mm512_cvtsepi32_epi8(v));
    out->bsums[i / 16] = int16_t(_mm512_reduce_add_epi32(_mm512_cvtepi8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(q + i)))));
  }
  // Segments of each 128 values, in the order the kernel reads them.
  static constexpr int kQ45K[4] = {0, 2, 1, 3};                 // of 32
  static constexpr int kIQ4XS[8] = {0, 2, 4, 6, 1, 3, 5, 7};    // of 16
  for (int base = 0; base < kQKK; base += 128) {
    if (order == XOrder::Natural) {
      std::memcpy(out->qs + base, q + base, 128);
    } else if (order == XOrder::Q45K) {
      for (int s = 0; s < 4; ++s) std::memcpy(out->qs + base + 32 * s, q + base + 32 * kQ45K[s], 32);
    } else {
      for (int s = 0; s < 8; ++s) std::memcpy(out->qs + base + 16 * s, q + base + 16 * kIQ4XS[s], 16);
    }
  }
}

inline __m512i load64(const void* p) { return _mm512_loadu_si512(p); }

// Rows are consecutive in memory and a thread walks a contiguous range of them: each super-block
// prefetches the bytes this far ahead, which the hardware prefetcher alone reaches too late.
constexpr size_t kPrefetchBytes = 8192;

template <class Block>
inline void prefetch_ahead(const Block* block) {
  const char* p = reinterpret_cast<const char*>(block) + kPrefetchBytes;
  for (size_t offset = 0; offset < sizeof(Block); offset += 64) _mm_prefetch(p + offset, _MM_HINT_T0);
}

// 16-bit lanes 0..15 = a, 16..31 = b.
inline __m512i halves_epi16(int16_t a, int16_t b) {
  return _mm512_mask_blend_epi16(0xffff0000u, _mm512_set1_epi16(a), _mm512_set1_epi16(b));
}

inline float hsum256(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 h = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}

// Dots of one Q4_K or Q5_K row with kTokens x rows.
template <DType D, int kTokens>
void dot_q45_k(const uint8_t* row, const XBlock* const* xs, int64_t num_blocks, float* out) {
  using Block = std::conditional_t<D == DType::Q4_K, BlockQ4_K, BlockQ5_K>;
  const Block* w = reinterpret_cast<const Block*>(row);
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  // Scale vector (c, h) applies sub-block 4c + h to the low 256 bits, 4c + 2 + h to the high.
  const __m512i scale_index[4] = {halves_epi16(0, 2), halves_epi16(1, 3), halves_epi16(4, 6), halves_epi16(5, 7)};
  __m512 acc[kTokens];
  __m256 acc_min[kTokens];
  for (int t = 0; t < kTokens; ++t) acc[t] = _mm512_setzero_ps(), acc_min[t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < num_blocks; ++b) {
    prefetch_ahead(w + b);
    const float d = _cvtsh_ss(w[b].d), dmin = _cvtsh_ss(w[b].dmin);
    // The 12 scale bytes hold 8 six-bit scales and 8 six-bit mins: bytes 0-3 scales 0-3 (low 6
    // bits), 4-7 mins 0-3, 8-11 the low nibbles of scales / mins 4-7, whose top 2 bits are the
    // top bits of bytes 0-3 / 4-7.
    uint32_t s[3];
    std::memcpy(s, w[b].scales, sizeof(s));
    const uint32_t sc_lo = s[0] & 0x3f3f3f3fu, m_lo = s[1] & 0x3f3f3f3fu;
    const uint32_t sc_hi = (s[2] & 0x0f0f0f0fu) | ((s[0] >> 2) & 0x30303030u);
    const uint32_t m_hi = ((s[2] >> 4) & 0x0f0f0f0fu) | ((s[1] >> 2) & 0x30303030u);
    const __m512i sc16 = _mm512_castsi128_si512(_mm_cvtepu8_epi16(_mm_set_epi32(0, 0, int(sc_hi), int(sc_lo))));
    __m512i scales[4];
    for (int i = 0; i < 4; ++i) scales[i] = _mm512_permutexvar_epi16(scale_index[i], sc16);
    // Each min twice, as 16-bit lanes 2j and 2j + 1, against the 16 sums of 16 x quants.
    const __m256i m32 = _mm256_cvtepu8_epi32(_mm_set_epi32(0, 0, int(m_hi), int(m_lo)));
    const __m256i mins = _mm256_or_si256(m32, _mm256_slli_epi32(m32, 16));

    __m512i high_bits = _mm512_setzero_si512();
    if constexpr (D == DType::Q5_K)
      high_bits = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].qh)));
    __m512i sumi[kTokens];
    for (int t = 0; t < kTokens; ++t) sumi[t] = _mm512_setzero_si512();
#pragma GCC unroll 2
    for (int c = 0; c < 2; ++c) {  // 128 values: nibbles of 64 bytes
      const __m512i bits = load64(w[b].qs + 64 * c);
      __m512i lo = _mm512_and_si512(bits, low4);                         // sub-blocks 4c, 4c + 2
      __m512i hi = _mm512_and_si512(_mm512_srli_epi16(bits, 4), low4);  // 4c + 1, 4c + 3
      if constexpr (D == DType::Q5_K) {  // bit j of qh byte l: +16 on value 32 j + l
        const __m512i sixteen = _mm512_set1_epi8(16);
        const __m512i bit_lo = _mm512_mask_blend_epi8(0xffffffff00000000ull, _mm512_set1_epi8(char(1 << (4 * c))),
                                                      _mm512_set1_epi8(char(1 << (4 * c + 2))));
        lo = _mm512_mask_add_epi8(lo, _mm512_test_epi8_mask(high_bits, bit_lo), lo, sixteen);
        hi = _mm512_mask_add_epi8(hi, _mm512_test_epi8_mask(high_bits, _mm512_add_epi8(bit_lo, bit_lo)), hi, sixteen);
      }
      for (int t = 0; t < kTokens; ++t) {
        const int8_t* q = xs[t][b].qs + 128 * c;
        sumi[t] = _mm512_dpwssd_epi32(sumi[t], _mm512_maddubs_epi16(lo, load64(q)), scales[2 * c]);
        sumi[t] = _mm512_dpwssd_epi32(sumi[t], _mm512_maddubs_epi16(hi, load64(q + 64)), scales[2 * c + 1]);
      }
    }
    for (int t = 0; t < kTokens; ++t) {
      const float dx = xs[t][b].d;
      acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(d * dx), _mm512_cvtepi32_ps(sumi[t]), acc[t]);
      const __m256i bsums = _mm256_load_si256(reinterpret_cast<const __m256i*>(xs[t][b].bsums));
      acc_min[t] = _mm256_fmadd_ps(_mm256_set1_ps(dmin * dx), _mm256_cvtepi32_ps(_mm256_madd_epi16(mins, bsums)),
                                   acc_min[t]);
    }
  }
  for (int t = 0; t < kTokens; ++t) out[t] = _mm512_reduce_add_ps(acc[t]) - hsum256(acc_min[t]);
}

// Dots of one Q6_K row with kTokens x rows.
template <int kTokens>
void dot_q6_k(const uint8_t* row, const XBlock* const* xs, int64_t num_blocks, float* out) {
  const BlockQ6_K* w = reinterpret_cast<const BlockQ6_K*>(row);
  const __m512i low4 = _mm512_set1_epi8(0x0f), low2 = _mm512_set1_epi8(0x03);
  // Shifts of the qh bytes (16-bit lanes) for the low and high 256 bits of each 64 values.
  const __m512i shift_a = halves_epi16(0, 2), shift_b = halves_epi16(4, 6);
  // Scale vector i applies sub-blocks 4i .. 4i + 3 (16 values, 8 lanes of 16 bits each).
  __m512i scale_index[4];
  for (int i = 0; i < 4; ++i) {
    alignas(64) int16_t index[32];
    for (int lane = 0; lane < 32; ++lane) index[lane] = int16_t(4 * i + lane / 8);
    scale_index[i] = _mm512_load_si512(index);
  }
  __m512 acc[kTokens];
  for (int t = 0; t < kTokens; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < num_blocks; ++b) {
    prefetch_ahead(w + b);
    const float d = _cvtsh_ss(w[b].d);
    const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].scales)));
    __m512i scales[4];
    for (int i = 0; i < 4; ++i) scales[i] = _mm512_permutexvar_epi16(scale_index[i], _mm512_castsi256_si512(sc16));
    __m512i sumi[kTokens];
    for (int t = 0; t < kTokens; ++t) sumi[t] = _mm512_setzero_si512();
#pragma GCC unroll 2
    for (int half = 0; half < 2; ++half) {  // 128 values: ql 64 bytes, qh 32 bytes
      // Values 128 half + 32 k + l: nibble of ql[64 half + 32 (k % 2) + l] (low for k < 2), bits
      // 2k, 2k + 1 of qh[32 half + l]. k = 0, 1 fill one register (64 values), k = 2, 3 the next.
      const __m512i ql = load64(w[b].ql + 64 * half);
      const __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].qh + 32 * half)));
      const __m512i qa = _mm512_or_si512(_mm512_and_si512(ql, low4),
                                         _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(qh, shift_a), low2), 4));
      const __m512i qb = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), low4),
                                         _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(qh, shift_b), low2), 4));
      for (int t = 0; t < kTokens; ++t) {
        const int8_t* q = xs[t][b].qs + 128 * half;
        sumi[t] = _mm512_dpwssd_epi32(sumi[t], _mm512_maddubs_epi16(qa, load64(q)), scales[2 * half]);
        sumi[t] = _mm512_dpwssd_epi32(sumi[t], _mm512_maddubs_epi16(qb, load64(q + 64)), scales[2 * half + 1]);
      }
    }
    for (int t = 0; t < kTokens; ++t) {
      // The "- 32" of every quant: 32 sum_j sc_j bsum_j.
      const __m256i bsums = _mm256_load_si256(reinterpret_cast<const __m256i*>(xs[t][b].bsums));
      const __m256i offset = _mm256_slli_epi32(_mm256_madd_epi16(sc16, bsums), 5);
      const __m512i total = _mm512_sub_epi32(sumi[t], _mm512_zextsi256_si512(offset));
      acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(d * xs[t][b].d), _mm512_cvtepi32_ps(total), acc[t]);
    }
  }
  for (int t = 0; t < kTokens; ++t) out[t] = _mm512_reduce_add_ps(acc[t]);
}

// Dots of one IQ4_XS row with kTokens x rows.
template <int kTokens>
void dot_iq4_xs(const uint8_t* row, const XBlock* const* xs, int64_t num_blocks, float* out) {
  const BlockIQ4_XS* w = reinterpret_cast<const BlockIQ4_XS*>(row);
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  alignas(16) uint8_t shifted[16];  // the code book + 128: unsigned
  for (int i = 0; i < 16; ++i) shifted[i] = uint8_t(kIq4nlValues[i] + 128);
  const __m512i book = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(shifted)));
  // Scale vector p applies sub-block 4p + i to 32-bit lanes 4i .. 4i + 3.
  const __m512i scale_index[2] = {_mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3),
                                  _mm512_setr_epi32(4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7)};
  const __m128i scale_h_shifts = _mm_setr_epi16(0, 2, 4, 6, 8, 10, 12, 14);
  __m512 acc[kTokens];
  for (int t = 0; t < kTokens; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < num_blocks; ++b) {
    prefetch_ahead(w + b);
    // ls_j = (nibble j of scales_l) | (bits 2j, 2j + 1 of scales_h) << 4; the scale is ls_j - 32.
    uint32_t scales_l;
    std::memcpy(&scales_l, w[b].scales_l, sizeof(scales_l));
    const __m128i nibbles = _mm_unpacklo_epi8(_mm_cvtsi32_si128(int(scales_l & 0x0f0f0f0fu)),
                                              _mm_cvtsi32_si128(int((scales_l >> 4) & 0x0f0f0f0fu)));
    const __m128i high = _mm_and_si128(_mm_srlv_epi16(_mm_set1_epi16(int16_t(w[b].scales_h)), scale_h_shifts),
                                       _mm_set1_epi16(3));
    const __m128i ls16 = _mm_sub_epi16(_mm_or_si128(_mm_cvtepu8_epi16(nibbles), _mm_slli_epi16(high, 4)),
                                       _mm_set1_epi16(32));
    const __m256i ls32 = _mm256_cvtepi16_epi32(ls16);
    const __m512i scales[2] = {_mm512_permutexvar_epi32(scale_index[0], _mm512_castsi256_si512(ls32)),
                               _mm512_permutexvar_epi32(scale_index[1], _mm512_castsi256_si512(ls32))};
    // Each scale twice, as 16-bit lanes 2j and 2j + 1, against the 16 sums of 16 x quants.
    const __m256i ls_pairs = _mm256_or_si256(_mm256_and_si256(ls32, _mm256_set1_epi32(0xffff)), _mm256_slli_epi32(ls32, 16));
    __m512i sumi[kTokens];
    for (int t = 0; t < kTokens; ++t) sumi[t] = _mm512_setzero_si512();
#pragma GCC unroll 2
    for (int p = 0; p < 2; ++p) {  // sub-blocks 4p .. 4p + 3, one per 128-bit lane
      const __m512i bits = load64(w[b].qs + 64 * p);
      const __m512i lo = _mm512_shuffle_epi8(book, _mm512_and_si512(bits, low4));                        // values 0..15
      const __m512i hi = _mm512_shuffle_epi8(book, _mm512_and_si512(_mm512_srli_epi16(bits, 4), low4));  // 16..31
      for (int t = 0; t < kTokens; ++t) {
        const int8_t* q = xs[t][b].qs + 128 * p;
        const __m512i dot = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, load64(q)), hi,
                                                load64(q + 64));
        sumi[t] = _mm512_add_epi32(sumi[t], _mm512_mullo_epi32(dot, scales[p]));
      }
    }
    const float d = _cvtsh_ss(w[b].d);
    for (int t = 0; t < kTokens; ++t) {
      // The +128 of every shifted code: 128 sum_j (ls_j - 32) bsum_j.
      const __m256i bsums = _mm256_load_si256(reinterpret_cast<const __m256i*>(xs[t][b].bsums));
      const __m256i offset = _mm256_slli_epi32(_mm256_madd_epi16(ls_pairs, bsums), 7);
      const __m512i total = _mm512_sub_epi32(sumi[t], _mm512_zextsi256_si512(offset));
      acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(d * xs[t][b].d), _mm512_cvtepi32_ps(total), acc[t]);
    }
  }
  for (int t = 0; t < kTokens; ++t) out[t] = _mm512_reduce_add_ps(acc[t]);
}

using DotFn = void (*)(const uint8_t*, const XBlock* const*, int64_t, float*);

template <int kTokens>
DotFn dot_for(DType dtype) {
  switch (dtype) {
    case DType::Q4_K: return dot_q45_k<DType::Q4_K, kTokens>;
    case DType::Q5_K: return dot_q45_k<DType::Q5_K, kTokens>;
    case DType::Q6_K: return dot_q6_k<kTokens>;
    case DType::IQ4_XS: return dot_iq4_xs<kTokens>;
    default: return nullptr;
  }
}

}  // namespace

bool has_kquant_matmul(DType dtype) { return dot_for<1>(dtype) != nullptr; }

void matmul_kquants(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool) {
  const DotFn dots[kMaxTokens] = {dot_for<1>(w.dtype), dot_for<2>(w.dtype), dot_for<3>(w.dtype), dot_for<4>(w.dtype)};
  const XOrder order = x_order_for(w.dtype);
  cpu::superblock_matmul<XBlock>(w, x, y, num_tokens, dots, kRowTile,
                                 [order](const float* x256, XBlock* out) { quantize_x(x256, out, order); }, pool);
}

}  // namespace llmesh::kernels::avx512

LLMESH_AVX512_END
