// AVX2 matmul for weights in 256-value super-blocks (Q4_K, Q5_K, Q6_K: the Q*_K_M files; IQ4_XS),
// any number of tokens.
//
// x is quantized once per call to Q8_K (super-blocks of 256: f32 scale d = amax / 127, int8
// q = round(x / d), ties to even, and the sum of every 16 q), and each weight super-block meets
// it in integer dot products: _mm256_maddubs_epi16 multiplies the unsigned weight quants by the
// signed x quants and adds neighbours (no overflow: q_w <= 63, |q_x| <= 127), _mm256_madd_epi16
// applies the sub-block scale and widens to int32. Offsets go through the x sums:
//   Q4_K, Q5_K: w = d * sc_j * q - dmin * m_j
//     w . x = d_x * (d * sum_j sc_j (q . q_x)_j - dmin * sum_j m_j bsum_j)
//   Q6_K:       w = d * sc_j * (q - 32), q in [0, 63]
//     w . x = d_x * d * sum_j sc_j ((q . q_x)_j - 32 bsum_j)
//   IQ4_XS:     w = d * (ls_j - 32) * book[q]: the signed code book values by byte shuffle,
//     signed x signed through the sign trick (|w| as unsigned, x carrying w's sign)
// Up to 4 tokens share each decoded super-block (prefill reuses the unpacked nibbles from
// registers); rows are split over the pool, and a thread walks a tile of rows for each group
// of tokens so the rows stay in L1/L2 while x streams.
//
// The result equals the reference on x rounded per 256 values to d * round(x / d)
// (matmul_quantizes_activations), up to f32 summation order.
#include <immintrin.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "kernels/cpu/avx2_ops.h"
#include "kernels/cpu/kquant_row_tiles.h"
#include "kernels/cpu/avx2_target.h"

LLMESH_AVX2_BEGIN

namespace llmesh::kernels::avx2 {

namespace {

constexpr int kMaxTokens = 4;  // tokens per pass over a row
constexpr int64_t kRowTile = 16;

// Rows are consecutive in memory and a thread walks a contiguous range of them: each super-block
// prefetches the bytes this far ahead, which the hardware prefetcher alone reaches too late.
constexpr size_t kPrefetchBytes = 8192;

template <class Block>
inline void prefetch_ahead(const Block* block) {
  const char* p = reinterpret_cast<const char*>(block) + kPrefetchBytes;
  for (size_t offset = 0; offset < sizeof(Block); offset += 64) _mm_prefetch(p + offset, _MM_HINT_T0);
}

inline float hsum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 h = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}

// x quantized to Q8_K, one super-block of 256.
void quantize_q8_k(const float* x, BlockQ8_K* out) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 amax = _mm256_setzero_ps();
  for (int i = 0; i < kQKK; i += 8) amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + i)));
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  const float d = _mm_cvtss_f32(m) / 127.0f;
  const __m256 inv_d = _mm256_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
  out->d = d;
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (int i = 0; i < kQKK; i += 32) {
    const __m256i a = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + i), inv_d));
    const __m256i b = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + i + 8), inv_d));
    const __m256i c = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + i + 16), inv_d));
    const __m256i e = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + i + 24), inv_d));
    // packs work within 128-bit lanes: the permute restores the order 0..31.
    const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, e));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out->qs + i), _mm256_permutevar8x32_epi32(bytes, order));
  }
  for (int j = 0; j < kQKK / 16; ++j) {
    int sum = 0;
    for (int i = 0; i < 16; ++i) sum += out->qs[16 * j + i];
    out->bsums[j] = int16_t(sum);
  }
}

// Q4_K / Q5_K: the 8 six-bit scales and mins packed in 12 bytes.
inline void unpack_scales_mins(const uint8_t* s, uint8_t* sc, uint8_t* m) {
  for (int j = 0; j < 4; ++j) {
    sc[j] = s[j] & 63;
    m[j] = s[j + 4] & 63;
    sc[j + 4] = uint8_t((s[j + 8] & 0x0f) | ((s[j] >> 6) << 4));
    m[j + 4] = uint8_t((s[j + 8] >> 4) | ((s[j + 4] >> 6) << 4));
  }
}

// The offset terms, per token: sum_j m_j * (x sum over sub-block j of 32).
inline int min_sum_32(const uint8_t* m, const int16_t* bsums) {
  int sum = 0;
  for (int j = 0; j < 8; ++j) sum += int(m[j]) * (bsums[2 * j] + bsums[2 * j + 1]);
  return sum;
}

// Dots of one Q4_K or Q5_K row with kTokens Q8_K rows.
template <DType D, int kTokens>
void dot_q45_k(const uint8_t* row, const BlockQ8_K* const* xs, int64_t num_blocks, float* out) {
  using Block = std::conditional_t<D == DType::Q4_K, BlockQ4_K, BlockQ5_K>;
  const Block* w = reinterpret_cast<const Block*>(row);
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  __m256 acc[kTokens];
  float acc_min[kTokens];
  for (int t = 0; t < kTokens; ++t) acc[t] = _mm256_setzero_ps(), acc_min[t] = 0.0f;
  for (int64_t b = 0; b < num_blocks; ++b) {
    prefetch_ahead(w + b);
    const float d = _cvtsh_ss(w[b].d), dmin = _cvtsh_ss(w[b].dmin);
    alignas(16) uint8_t sc[8], m[8];
    unpack_scales_mins(w[b].scales, sc, m);
    __m256i sumi[kTokens];
    for (int t = 0; t < kTokens; ++t) sumi[t] = _mm256_setzero_si256();
    __m256i high_bits = _mm256_setzero_si256();
    if constexpr (D == DType::Q5_K) high_bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].qh));
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {  // 64 values: 32 low nibbles, then 32 high nibbles
      const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].qs + 32 * c));
      __m256i lo = _mm256_and_si256(bits, low4);
      __m256i hi = _mm256_and_si256(_mm256_srli_epi16(bits, 4), low4);
      if constexpr (D == DType::Q5_K) {  // bit 2c (low nibble) and 2c + 1 (high) of qh byte l: +16
        const __m256i one = _mm256_set1_epi8(1);
        lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high_bits, 2 * c), one), 4));
        hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high_bits, 2 * c + 1), one), 4));
      }
      const __m256i scale_lo = _mm256_set1_epi16(sc[2 * c]), scale_hi = _mm256_set1_epi16(sc[2 * c + 1]);
      for (int t = 0; t < kTokens; ++t) {
        const int8_t* q = xs[t][b].qs + 64 * c;
        const __m256i p_lo = _mm256_maddubs_epi16(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)));
        const __m256i p_hi = _mm256_maddubs_epi16(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 32)));
        sumi[t] = _mm256_add_epi32(sumi[t], _mm256_add_epi32(_mm256_madd_epi16(p_lo, scale_lo),
                                                             _mm256_madd_epi16(p_hi, scale_hi)));
      }
    }
    for (int t = 0; t < kTokens; ++t) {
      const float dx = xs[t][b].d;
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d * dx), _mm256_cvtepi32_ps(sumi[t]), acc[t]);
      acc_min[t] += dmin * dx * float(min_sum_32(m, xs[t][b].bsums));
    }
  }
  for (int t = 0; t < kTokens; ++t) out[t] = hsum(acc[t]) - acc_min[t];
}

// Dots of one Q6_K row with kTokens Q8_K rows.
template <int kTokens>
void dot_q6_k(const uint8_t* row, const BlockQ8_K* const* xs, int64_t num_blocks, float* out) {
  const BlockQ6_K* w = reinterpret_cast<const BlockQ6_K*>(row);
  const __m256i low4 = _mm256_set1_epi8(0x0f), low2 = _mm256_set1_epi8(0x03);
  __m256 acc[kTokens];
  for (int t = 0; t < kTokens; ++t) acc[t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < num_blocks; ++b) {
    prefetch_ahead(w + b);
    const float d = _cvtsh_ss(w[b].d);
    const int8_t* sc = w[b].scales;
    __m256i sumi[kTokens];
    int offset[kTokens];  // 32 * sum_j sc_j bsum_j: the "- 32" of every quant
    for (int t = 0; t < kTokens; ++t) {
      sumi[t] = _mm256_setzero_si256();
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += int(sc[j]) * xs[t][b].bsums[j];
      offset[t] = 32 * sum;
    }
#pragma GCC unroll 2
    for (int half = 0; half < 2; ++half) {  // 128 values: ql 64 bytes, qh 32 bytes
      const uint8_t* ql = w[b].ql + 64 * half;
      const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
      const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].qh + 32 * half));
      // Values 128 half + 32 k + l, k = 0..3: nibble of l0/l1, 2 bits 2k..2k+1 of h, as q in [0, 63].
      const __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(l0, low4), _mm256_slli_epi16(_mm256_and_si256(h, low2), 4)),
          _mm256_or_si256(_mm256_and_si256(l1, low4),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 2), low2), 4)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low4),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 4), low2), 4)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low4),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 6), low2), 4)),
      };
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        // 32 values = two sub-blocks of 16: one scale per 128-bit lane of the maddubs result.
        const int j = 8 * half + 2 * k;
        const __m256i scales = _mm256_set_m128i(_mm_set1_epi16(sc[j + 1]), _mm_set1_epi16(sc[j]));
        for (int t = 0; t < kTokens; ++t) {
          const int8_t* qx = xs[t][b].qs + 128 * half + 32 * k;
          const __m256i p = _mm256_maddubs_epi16(q[k], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qx)));
          sumi[t] = _mm256_add_epi32(sumi[t], _mm256_madd_epi16(p, scales));
        }
      }
    }
    for (int t = 0; t < kTokens; ++t) {
      const __m256i total = _mm256_sub_epi32(sumi[t], _mm256_setr_epi32(offset[t], 0, 0, 0, 0, 0, 0, 0));
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d * xs[t][b].d), _mm256_cvtepi32_ps(total), acc[t]);
    }
  }
  for (int t = 0; t < kTokens; ++t) out[t] = hsum(acc[t]);
}

// Dots of one IQ4_XS row with kTokens Q8_K rows: the code book by byte shuffle, signed x signed
// through the sign trick (|w| unsigned, x carrying w's sign; |w|, |q_x| <= 127 cannot overflow).
template <int kTokens>
void dot_iq4_xs(const uint8_t* row, const BlockQ8_K* const* xs, int64_t num_blocks, float* out) {
  const BlockIQ4_XS* w = reinterpret_cast<const BlockIQ4_XS*>(row);
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  const __m256i book = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4nlValues)));
  __m256 acc[kTokens];
  for (int t = 0; t < kTokens; ++t) acc[t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < num_blocks; ++b) {
    prefetch_ahead(w + b);
    __m256i sumi[kTokens];
    for (int t = 0; t < kTokens; ++t) sumi[t] = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int pair = 0; pair < 4; ++pair) {  // sub-blocks 2 pair and 2 pair + 1, one per 128-bit lane
      const int ib = 2 * pair;
      const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].qs + 16 * ib));
      const __m256i lo = _mm256_shuffle_epi8(book, _mm256_and_si256(bits, low4));                       // values 0..15
      const __m256i hi = _mm256_shuffle_epi8(book, _mm256_and_si256(_mm256_srli_epi16(bits, 4), low4));  // 16..31
      auto scale_of = [&](int i) {
        return int16_t((((w[b].scales_l[i / 2] >> (4 * (i % 2))) & 0x0f) | (((w[b].scales_h >> (2 * i)) & 3) << 4)) - 32);
      };
      const __m256i scales = _mm256_set_m128i(_mm_set1_epi16(scale_of(ib + 1)), _mm_set1_epi16(scale_of(ib)));
      const __m256i abs_lo = _mm256_sign_epi8(lo, lo), abs_hi = _mm256_sign_epi8(hi, hi);
      for (int t = 0; t < kTokens; ++t) {
        const int8_t* q = xs[t][b].qs + 32 * ib;
        const __m256i x_lo = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(q + 32), reinterpret_cast<const __m128i*>(q));
        const __m256i x_hi =
            _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(q + 48), reinterpret_cast<const __m128i*>(q + 16));
        const __m256i p = _mm256_add_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(abs_lo, _mm256_sign_epi8(x_lo, lo)), scales),
                                           _mm256_madd_epi16(_mm256_maddubs_epi16(abs_hi, _mm256_sign_epi8(x_hi, hi)), scales));
        sumi[t] = _mm256_add_epi32(sumi[t], p);
      }
    }
    const float d = _cvtsh_ss(w[b].d);
    for (int t = 0; t < kTokens; ++t)
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d * xs[t][b].d), _mm256_cvtepi32_ps(sumi[t]), acc[t]);
  }
  for (int t = 0; t < kTokens; ++t) out[t] = hsum(acc[t]);
}

using DotFn = void (*)(const uint8_t*, const BlockQ8_K* const*, int64_t, float*);

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
  cpu::superblock_matmul<BlockQ8_K>(w, x, y, num_tokens, dots, kRowTile, quantize_q8_k, pool);
}

}  // namespace llmesh::kernels::avx2

LLMESH_AVX2_END
