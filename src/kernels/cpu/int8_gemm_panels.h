// Weight panels and quantized x for the int8 GEMMs (matmul_int8_gemm_avx512.cpp,
// matmul_int8_gemm_avx2.cpp): block-quantized rows unpacked to unsigned bytes q with a scale and a
// min per block (w = scale * q - min), laid out so one vector holds 4 consecutive q of every row of
// a panel; x quantized to int8 per 32 values (per 256 against 256-value super-blocks) with d_x and
// d_x * sum(q_x) per block. AVX2 intrinsics, so that both families compile it: include it inside
// LLMESH_AVX2_BEGIN or LLMESH_AVX512_BEGIN, after <algorithm>, <array>, <cstring>, <type_traits>,
// <vector> and core/error.h.
#pragma once

#include "core/thread_pool.h"
#include "kernels/ops.h"

// Everything here has internal linkage: each family's translation unit compiles its own copy for
// its own target (one shared inline definition could end up built for AVX-512 and run on AVX2).
namespace llmesh::kernels::cpu {
namespace {

// Per token and block: the x scale and the scale times the sum of the block's quants.
struct XScale {
  float d, d_sum;
};

// Rows of one panel (kPanelRows rows), unpacked: per block (block / 4) x [rows] int32 (4 q bytes
// each), and per block [rows] scales and [rows] mins.
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
      if constexpr (D == DType::Q5_K) {  // bit j of qh[l]: +16 (16-bit shifts; the mask keeps each byte's own bit)
        const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qh));
        v = _mm256_or_si256(v, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, j), _mm256_set1_epi8(1)), 4));
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(q[j]), v);
      int sc, m;
      k4_scale_min(blk.scales, j, &sc, &m);
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
template <DType D, int kPanelRows>
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

// x[t] quantized per `unit` values (32 or 256) into xq[t] (int8) and xs[t][block], blocks of `block`
// values (16 or 32).
void quantize_x(const float* x, int64_t num_tokens, int64_t num_in, int64_t unit, int64_t block, int8_t* xq,
                XScale* xs) {
  for (int64_t t = 0; t < num_tokens; ++t) {
    for (int64_t u = 0; u < num_in; u += unit) {
      const float* src = x + t * num_in + u;
      const __m256 sign = _mm256_set1_ps(-0.0f);
      __m256 amax = _mm256_setzero_ps();
      for (int64_t i = 0; i < unit; i += 8) amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign, _mm256_loadu_ps(src + i)));
      alignas(32) float lanes[8];
      _mm256_store_ps(lanes, amax);
      const float d = *std::max_element(lanes, lanes + 8) / 127.0f;
      const __m256 inv_d = _mm256_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
      int sum = 0;
      for (int64_t i = 0; i < unit; i += 16) {
        const __m256i a = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(src + i), inv_d));
        const __m256i b = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(src + i + 8), inv_d));
        // |q| <= 127: the saturating packs are exact; they interleave 128-bit lanes, the permute undoes it.
        const __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(a, b), 0xd8);
        const __m128i bytes = _mm_packs_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(xq + t * num_in + u + i), bytes);
        alignas(32) int32_t ints[8];
        _mm256_store_si256(reinterpret_cast<__m256i*>(ints), _mm256_add_epi32(a, b));
        for (int k = 0; k < 8; ++k) sum += ints[k];
        if ((i + 16) % block == 0) {
          xs[t * (num_in / block) + (u + i) / block] = {d, d * float(sum)};
          sum = 0;
        }
      }
    }
  }
}


// One GEMM tile: y[t][0..num_rows) = panel rows . x[t] for the tile's tokens.
using GemmTileFn = void (*)(const Panel& panel, int64_t num_blocks, const int8_t* xq, int64_t num_in,
                            const XScale* xs, float* y, int64_t y_stride, int64_t num_rows);

// y = w x over many tokens: x quantized once per call (per `unit` values: the weight type's
// storage unit, or 256 where the kernel reads x per super-block), rows split over the pool in
// panels unpacked once each, token tiles of up to kTokenTile (tiles[n - 1]: n tokens).
template <DType D, int kPanelRows, size_t kTokenTile>
void run_gemm(const Tensor& w, const float* x, float* y, int64_t num_tokens, int64_t unit,
              const std::array<GemmTileFn, kTokenTile>& tiles, ThreadPool& pool) {
  const int64_t num_out = w.shape[0], num_in = w.shape[1];
  constexpr int kBlock = Unpack<D>::kBlock;
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
      unpack_panel<D, kPanelRows>(w, row_begin, num_rows, num_blocks, panel);
      for (int64_t t = 0; t < num_tokens; t += int64_t(kTokenTile)) {
        const int64_t n = std::min<int64_t>(int64_t(kTokenTile), num_tokens - t);
        tiles[size_t(n - 1)](panel, num_blocks, xq + t * num_in, num_in, xs + t * num_blocks, y + t * num_out + row_begin,
                             num_out, num_rows);
      }
    }
  });
}

}  // namespace
}  // namespace llmesh::kernels::cpu
