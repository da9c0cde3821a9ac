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

namespace llmesh::kernels::avx512 {

namespace {

constexpr int kPanelRows = 16;
constexpr int kTokenTile = 8;

// Per token and block: the x scale and the scale times the sum of the block's quants.
struct XScale {
  float d, d_sum;
};

// Rows of one 16-row panel, unpacked: per block (block / 4) x [16 rows] int32 (4 q bytes each),
// and per block [16] scales and [16] mins.
struct Panel {
  std::vector<int32_t> q;
  std::vector<float> scale, min;
};

// unit(row, u, q, scale, min): the unsigned quants, scale and min of each block (kBlock values) of
// storage unit u of a row (a Q8_0/Q4_0 block, or a 256-value super-block).
template <DType D>
struct Unpack;

template <>
struct Unpack<DType::Q8_0> {
  static constexpr int kBlock = 32, kUnitBlocks = 1;
  static void unit(const uint8_t* row, int64_t u, uint8_t (*q)[kBlock], float* scale, float* min) {
    const auto& blk = reinterpret_cast<const BlockQ8_0*>(row)[u];
    const float d = _cvtsh_ss(blk.d);
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q[0]), _mm256_xor_si256(w, _mm256_set1_epi8(char(0x80))));  // w + 128
    scale[0] = d, min[0] = 128.0f * d;
  }
};

template <>
struct Unpack<DType::Q4_0> {
  static constexpr int kBlock = 32, kUnitBlocks = 1;
  static void unit(const uint8_t* row, int64_t u, uint8_t (*q)[kBlock], float* scale, float* min) {
    const auto& blk = reinterpret_cast<const BlockQ4_0*>(row)[u];
    const float d = _cvtsh_ss(blk.d);
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.qs));
    const __m128i low4 = _mm_set1_epi8(0x0f);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q[0]), _mm_and_si128(bytes, low4));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q[0] + 16), _mm_and_si128(_mm_srli_epi16(bytes, 4), low4));
    scale[0] = d, min[0] = 8.0f * d;
  }
};

// Q4_K / Q5_K scale and min of sub-block j (6 bits each, packed in 12 bytes).
inline void scale_min_k4(const uint8_t* s, int j, int* scale, int* min) {
  if (j < 4) {
    *scale = s[j] & 63, *min = s[j + 4] & 63;
  } else {
    *scale = (s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4);
    *min = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

template <DType D>
struct UnpackQ45K {
  static constexpr int kBlock = 32, kUnitBlocks = 8;
  static void unit(const uint8_t* row, int64_t u, uint8_t (*q)[kBlock], float* scale, float* min) {
    using Block = std::conditional_t<D == DType::Q4_K, BlockQ4_K, BlockQ5_K>;
    const Block& blk = reinterpret_cast<const Block*>(row)[u];
    const float d = _cvtsh_ss(blk.d), dmin = _cvtsh_ss(blk.dmin);
    for (int j = 0; j < 8; ++j) {
      const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs + 32 * (j / 2)));
      __m256i v = _mm256_and_si256(j % 2 ? _mm256_srli_epi16(bytes, 4) : bytes, _mm256_set1_epi8(0x0f));
      if constexpr (D == DType::Q5_K) {  // bit j of qh[l]: +16
        const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qh));
        v = _mm256_mask_add_epi8(v, _mm256_test_epi8_mask(qh, _mm256_set1_epi8(char(1 << j))), v, _mm256_set1_epi8(16));
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(q[j]), v);
      int sc, m;
      scale_min_k4(blk.scales, j, &sc, &m);
      scale[j] = d * float(sc), min[j] = dmin * float(m);
    }
  }
};
template <>
struct Unpack<DType::Q4_K> : UnpackQ45K<DType::Q4_K> {};
template <>
struct Unpack<DType::Q5_K> : UnpackQ45K<DType::Q5_K> {};

template <>
struct Unpack<DType::Q6_K> {
  static constexpr int kBlock = 16, kUnitBlocks = 16;
  static void unit(const uint8_t* row, int64_t u, uint8_t (*q)[kBlock], float* scale, float* min) {
    const auto& blk = reinterpret_cast<const BlockQ6_K*>(row)[u];
    const float d = _cvtsh_ss(blk.d);
    // Value 128 h + 32 k + l: nibble k / 2 of ql[64 h + 32 (k % 2) + l], bits 2k, 2k + 1 of qh[32 h + l].
    uint8_t* out = q[0];  // q[16][16] is the 256 values in order
    for (int h = 0; h < 2; ++h) {
      const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qh + 32 * h));
      for (int k = 0; k < 4; ++k) {
        const __m256i ql = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.ql + 64 * h + 32 * (k % 2)));
        const __m256i low = _mm256_and_si256(k < 2 ? ql : _mm256_srli_epi16(ql, 4), _mm256_set1_epi8(0x0f));
        const __m256i high = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * k), _mm256_set1_epi8(0x03));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 128 * h + 32 * k),
                            _mm256_or_si256(low, _mm256_slli_epi16(high, 4)));
      }
    }
    for (int j = 0; j < kUnitBlocks; ++j) scale[j] = d * float(blk.scales[j]), min[j] = 32.0f * scale[j];
  }
};

template <>
struct Unpack<DType::IQ4_XS> {
  static constexpr int kBlock = 32, kUnitBlocks = 8;
  static void unit(const uint8_t* row, int64_t u, uint8_t (*q)[kBlock], float* scale, float* min) {
    const auto& blk = reinterpret_cast<const BlockIQ4_XS*>(row)[u];
    const float d = _cvtsh_ss(blk.d);
    alignas(16) uint8_t shifted[16];  // the code book + 128
    for (int i = 0; i < 16; ++i) shifted[i] = uint8_t(kIq4nlValues[i] + 128);
    const __m128i book = _mm_load_si128(reinterpret_cast<const __m128i*>(shifted)), low4 = _mm_set1_epi8(0x0f);
    for (int j = 0; j < 8; ++j) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.qs + 16 * j));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q[j]), _mm_shuffle_epi8(book, _mm_and_si128(bytes, low4)));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q[j] + 16),
                       _mm_shuffle_epi8(book, _mm_and_si128(_mm_srli_epi16(bytes, 4), low4)));
      const int ls = ((blk.scales_l[j / 2] >> (4 * (j % 2))) & 0x0f) | (((blk.scales_h >> (2 * j)) & 3) << 4);
      scale[j] = d * float(ls - 32), min[j] = 128.0f * scale[j];
    }
  }
};

// Unpacks rows [row_begin, row_begin + num_rows) into the panel (rows past num_rows are zero).
template <DType D>
void unpack_panel(const Tensor& w, int64_t row_begin, int64_t num_rows, int64_t num_blocks, Panel& p) {
  using U = Unpack<D>;
  constexpr int kGroups = U::kBlock / 4;
  p.q.assign(size_t(num_blocks * kGroups * kPanelRows), 0);
  p.scale.assign(size_t(num_blocks * kPanelRows), 0.0f);
  p.min.assign(size_t(num_blocks * kPanelRows), 0.0f);
  uint8_t q[U::kUnitBlocks][U::kBlock];
  float scale[U::kUnitBlocks], min[U::kUnitBlocks];
  for (int64_t r = 0; r < num_rows; ++r) {
    const uint8_t* row = w.row(row_begin + r);
    for (int64_t u = 0; u < num_blocks / U::kUnitBlocks; ++u) {
      U::unit(row, u, q, scale, min);
      for (int j = 0; j < U::kUnitBlocks; ++j) {
        const int64_t b = u * U::kUnitBlocks + j;
        for (int g = 0; g < kGroups; ++g)
          std::memcpy(&p.q[size_t((b * kGroups + g) * kPanelRows + r)], q[j] + 4 * g, 4);
        p.scale[size_t(b * kPanelRows + r)] = scale[j];
        p.min[size_t(b * kPanelRows + r)] = min[j];
      }
    }
  }
}

// y[t][0..16) = panel rows . x[t] for t < T, blocks of 4 * kGroups values; mask cuts the panel's
// missing rows.
template <int kGroups, int T>
void gemm_tile(const Panel& p, int64_t num_blocks, const int8_t* xq, int64_t num_in, const XScale* xs, float* y,
               int64_t y_stride, __mmask16 mask) {
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

using TileFn = void (*)(const Panel&, int64_t, const int8_t*, int64_t, const XScale*, float*, int64_t, __mmask16);
template <int kGroups, int... Ts>
constexpr auto make_tile_table(std::integer_sequence<int, Ts...>) {
  return std::array<TileFn, sizeof...(Ts)>{&gemm_tile<kGroups, Ts + 1>...};
}
// kTiles<G>[n - 1]: n tokens.
template <int kGroups>
constexpr auto kTiles = make_tile_table<kGroups>(std::make_integer_sequence<int, kTokenTile>{});

// x[t] quantized per `unit` values (32 or 256) into xq[t] (int8) and xs[t][block], blocks of `block`
// values (16 or 32).
void quantize_x(const float* x, int64_t num_tokens, int64_t num_in, int64_t unit, int64_t block, int8_t* xq,
                XScale* xs) {
  for (int64_t t = 0; t < num_tokens; ++t) {
    for (int64_t u = 0; u < num_in; u += unit) {
      const float* src = x + t * num_in + u;
      __m512 amax = _mm512_setzero_ps();
      for (int64_t i = 0; i < unit; i += 16) amax = _mm512_max_ps(amax, _mm512_abs_ps(_mm512_loadu_ps(src + i)));
      const float d = _mm512_reduce_max_ps(amax) / 127.0f;
      const __m512 inv_d = _mm512_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
      int sum = 0;
      for (int64_t i = 0; i < unit; i += 16) {
        const __m512i a = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(src + i), inv_d));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(xq + t * num_in + u + i), _mm512_cvtsepi32_epi8(a));
        sum += _mm512_reduce_add_epi32(a);
        if ((i + 16) % block == 0) {
          xs[t * (num_in / block) + (u + i) / block] = {d, d * float(sum)};
          sum = 0;
        }
      }
    }
  }
}

template <DType D>
void gemm(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool) {
  const int64_t num_out = w.shape[0], num_in = w.shape[1];
  constexpr int kBlock = Unpack<D>::kBlock;
  const int64_t unit = Unpack<D>::kUnitBlocks * kBlock;
  check(num_in % unit == 0, "matmul: {} inputs of {} is not a multiple of {}", num_in, w.name, unit);
  const int64_t num_blocks = num_in / kBlock;
  thread_local std::vector<int8_t> xq_buffer;
  thread_local std::vector<XScale> xs_buffer;
  xq_buffer.resize(size_t(num_tokens * num_in));
  xs_buffer.resize(size_t(num_tokens * num_blocks));
  quantize_x(x, num_tokens, num_in, unit, kBlock, xq_buffer.data(), xs_buffer.data());
  const int8_t* xq = xq_buffer.data();  // workers see their own thread_local buffers: pass the caller's
  const XScale* xs = xs_buffer.data();
  const int64_t num_panels = (num_out + kPanelRows - 1) / kPanelRows;
  pool.parallel_for(num_panels, 1, [&](int64_t panel_begin, int64_t panel_end) {
    thread_local Panel panel;
    for (int64_t p = panel_begin; p < panel_end; ++p) {
      const int64_t row_begin = p * kPanelRows;
      const int64_t num_rows = std::min<int64_t>(kPanelRows, num_out - row_begin);
      unpack_panel<D>(w, row_begin, num_rows, num_blocks, panel);
      const __mmask16 mask = first_lanes(num_rows);
      for (int64_t t = 0; t < num_tokens; t += kTokenTile) {
        const int64_t n = std::min<int64_t>(kTokenTile, num_tokens - t);
        kTiles<kBlock / 4>[size_t(n - 1)](panel, num_blocks, xq + t * num_in, num_in, xs + t * num_blocks,
                              y + t * num_out + row_begin, num_out, mask);
      }
    }
  });
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
