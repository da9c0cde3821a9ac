// matmul: the AVX-512 and AVX2 paths (decode dot tiles, int8 tiles, prefill panels) against the
// scalar reference, over a table of shapes, token counts and every weight dtype.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "core/error.h"
#include "kernels/cpu/avx2_ops.h"
#include "kernels/cpu/avx512_ops.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/ops.h"
#include "kernels/ref/ref_ops.h"
#include "kernel_test_util.h"

namespace llmesh::kernels {
namespace {

using testing::GuardedOutput;
using testing::nmse;
using testing::random_floats;

// The types without a C++ quantizer: random quant bits, and every scale field a small finite
// value (offsets per core/quant_blocks.h), so the values are of order 1 / sqrt(cols).
void fill_blocks(DType dtype, std::vector<uint8_t>& bytes, uint32_t seed) {
  uint32_t state = seed * 2654435761u + 1;
  for (uint8_t& b : bytes) {
    state = state * 1664525u + 1013904223u;
    b = uint8_t(state >> 24);
  }
  std::vector<size_t> f16_scales;
  switch (dtype) {
    case DType::Q4_1: case DType::Q5_1: f16_scales = {0, 2}; break;
    case DType::Q5_0: case DType::IQ4_NL: case DType::IQ4_XS: f16_scales = {0}; break;
    case DType::Q2_K: f16_scales = {80, 82}; break;
    case DType::Q3_K: f16_scales = {108}; break;
    case DType::Q4_K: case DType::Q5_K: f16_scales = {0, 2}; break;
    case DType::Q6_K: f16_scales = {208}; break;
    default: break;
  }
  const size_t block_bytes = dtype_block_bytes(dtype);
  for (size_t off = 0; off < bytes.size(); off += block_bytes) {
    const uint16_t small = f32_to_f16(0.002f);
    for (size_t f : f16_scales) std::memcpy(&bytes[off + f], &small, 2);
    if (dtype == DType::Q8_K) {
      const float d = 0.0005f;
      std::memcpy(&bytes[off], &d, 4);
    }
    if (dtype == DType::MXFP4) bytes[off] = 118;
  }
}

// Weight bytes of `dtype` for a {rows, cols} matrix made from random f32 values.
std::vector<uint8_t> make_weights(DType dtype, int64_t rows, int64_t cols, uint32_t seed) {
  const std::vector<float> values = random_floats(size_t(rows * cols), seed);
  const size_t row_bytes = dtype_row_bytes(dtype, cols);
  std::vector<uint8_t> bytes(size_t(rows) * row_bytes);
  for (int64_t r = 0; r < rows; ++r) {
    const float* src = values.data() + r * cols;
    uint8_t* dst = bytes.data() + size_t(r) * row_bytes;
    for (int64_t c = 0; c < cols; ++c) {
      switch (dtype) {
        case DType::F32: std::memcpy(dst + 4 * c, &src[c], 4); break;
        case DType::F16: { const uint16_t h = f32_to_f16(src[c]); std::memcpy(dst + 2 * c, &h, 2); break; }
        case DType::BF16: { const uint16_t h = f32_to_bf16(src[c]); std::memcpy(dst + 2 * c, &h, 2); break; }
        default: break;
      }
    }
    if (dtype == DType::Q8_0) quantize_row_q8_0(src, reinterpret_cast<BlockQ8_0*>(dst), cols);
    if (dtype == DType::Q4_0) quantize_row_q4_0(src, reinterpret_cast<BlockQ4_0*>(dst), cols);
  }
  if (dtype_block_size(dtype) > 1 && dtype != DType::Q8_0 && dtype != DType::Q4_0) fill_blocks(dtype, bytes, seed);
  return bytes;
}

struct MatmulCase {
  DType dtype;
  int64_t num_out, num_in, num_tokens;
};

std::string case_name(const MatmulCase& c) {
  return fmt::format("{} out={} in={} tokens={}", dtype_name(c.dtype), c.num_out, c.num_in, c.num_tokens);
}

std::vector<MatmulCase> matmul_cases() {
  std::vector<MatmulCase> cases;
  const DType all[] = {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0};
  for (DType dtype : all) {
    const bool quantized = dtype_block_size(dtype) > 1;
    // Shapes: a single row, rows not a multiple of 4 (decode tail) or 32 (prefill panel mask),
    // inputs spanning several 256-wide K blocks with a partial last one.
    const std::vector<std::pair<int64_t, int64_t>> shapes =
        quantized ? std::vector<std::pair<int64_t, int64_t>>{{1, 32}, {7, 64}, {37, 96}, {67, 288}, {64, 544}}
                  : std::vector<std::pair<int64_t, int64_t>>{{1, 5}, {7, 33}, {37, 77}, {67, 300}, {64, 544}};
    for (auto [num_out, num_in] : shapes)
      for (int64_t num_tokens : {1, 3, 17, 64, 130}) cases.push_back({dtype, num_out, num_in, num_tokens});
  }
  // The other block types (random blocks): the super-block kernels (Q4_K, Q5_K, Q6_K, IQ4_XS,
  // through row tiles of 16 and token groups of up to 4), the f32 panels (130 tokens) or AVX2's
  // dequantizing path.
  for (DType dtype : kAllDTypes) {
    if (std::find(std::begin(all), std::end(all), dtype) != std::end(all)) continue;
    const int64_t block = dtype_block_size(dtype);
    for (int64_t num_tokens : {1, 3, 4, 5, 13, 130}) {
      cases.push_back({dtype, 7, 3 * block, num_tokens});
      cases.push_back({dtype, 37, 2 * block, num_tokens});
    }
  }
  return cases;
}

// x rounded the way the int8 activation path sees it: per block of 32 (Q8_0; 256 against weights
// in 256-value super-blocks: Q8_K), d = amax / 127 (f32), x -> d * round(x / d). Written
// independently of the kernels.
std::vector<float> round_activations_to_int8_blocks(const std::vector<float>& x, size_t block) {
  std::vector<float> rounded(x.size());
  for (size_t b = 0; b < x.size(); b += block) {
    float amax = 0.0f;
    for (size_t j = b; j < b + block; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    for (size_t j = b; j < b + block; ++j) rounded[j] = d == 0.0f ? 0.0f : d * std::nearbyint(x[j] * (1.0f / d));
  }
  return rounded;
}

using MatmulFn = std::function<void(const Tensor&, const float*, float*, int64_t, ThreadPool&)>;

void check_against_reference(const MatmulCase& c, MatmulFn fast, bool fast_quantizes_x, ThreadPool& pool) {
  SCOPED_TRACE(case_name(c));
  const std::vector<uint8_t> bytes = make_weights(c.dtype, c.num_out, c.num_in, uint32_t(c.num_out * 131 + c.num_in));
  const Tensor w{"w", c.dtype, {c.num_out, c.num_in}, bytes.data()};
  const std::vector<float> x = random_floats(size_t(c.num_tokens * c.num_in), 99);  // [tokens, in]
  GuardedOutput expected(size_t(c.num_tokens * c.num_out)), actual(size_t(c.num_tokens * c.num_out));
  ref::matmul(w, x.data(), expected.data(), c.num_tokens, pool);
  fast(w, x.data(), actual.data(), c.num_tokens, pool);
  EXPECT_TRUE(actual.guard_intact()) << "wrote past the end of y";
  if (fast_quantizes_x) {
    // Exact integer products: matches the reference on the same rounded x to f32 rounding...
    GuardedOutput expected_rounded(actual.size());
    const size_t block = dtype_block_size(c.dtype) == kQKK ? kQKK : kQK;
    ref::matmul(w, round_activations_to_int8_blocks(x, block).data(), expected_rounded.data(), c.num_tokens, pool);
    EXPECT_LT(nmse(actual.data(), expected_rounded.data(), actual.size()), 1e-9);
    // ...and the unrounded reference to int8 rounding of x.
    EXPECT_LT(nmse(actual.data(), expected.data(), actual.size()), 1e-3);
  } else {
    // Same dequantized weights, f32 products: only summation order differs.
    EXPECT_LT(nmse(actual.data(), expected.data(), actual.size()), 1e-10);
  }
  // The reference itself against a hand-rolled dot product on one element.
  std::vector<float> row(static_cast<size_t>(c.num_in));
  dequantize_row(c.dtype, w.row(c.num_out - 1), row.data(), c.num_in);
  double dot = 0.0;
  for (int64_t i = 0; i < c.num_in; ++i) dot += double(row[size_t(i)]) * x[size_t((c.num_tokens - 1) * c.num_in + i)];
  EXPECT_NEAR(expected.data()[c.num_tokens * c.num_out - 1], dot, 1e-4 * (1.0 + std::fabs(dot)));
}

TEST(Matmul, Avx512MatchesReference) {
  LLMESH_REQUIRE_AVX512();
  for (int num_threads : {1, 2}) {
    ThreadPool pool(num_threads);
    for (const MatmulCase& c : matmul_cases())
      check_against_reference(c, avx512::matmul, avx512::matmul_quantizes_activations(c.dtype, c.num_tokens), pool);
  }
}

TEST(Matmul, Avx2MatchesReference) {
  LLMESH_REQUIRE_AVX2();
  for (int num_threads : {1, 2}) {
    ThreadPool pool(num_threads);
    for (const MatmulCase& c : matmul_cases())
      check_against_reference(c, avx2::matmul, avx2::matmul_quantizes_activations(c.dtype, c.num_tokens), pool);
  }
}

// Whether the dispatched matmul (the family best_cpu_kernels chose) rounds x to int8 blocks.
bool dispatched_quantizes_activations(DType dtype, int64_t num_tokens) {
  const std::string_view family = backend_name();
  if (family == "avx512") return avx512::matmul_quantizes_activations(dtype, num_tokens);
  if (family == "avx2") return avx2::matmul_quantizes_activations(dtype, num_tokens);
  return false;
}

TEST(Matmul, DispatchedMatchesReference) {
  ThreadPool pool(2);
  CpuBackend cpu(pool);
  const MatmulFn backend_matmul = [&](const Tensor& w, const float* x, float* y, int64_t n, ThreadPool&) {
    cpu.matmul(w, x, y, n);
  };
  for (const MatmulCase& c : matmul_cases())
    if (c.num_tokens != 17 && c.num_tokens != 64)
      check_against_reference(c, backend_matmul, dispatched_quantizes_activations(c.dtype, c.num_tokens), pool);
}

// Decode path at a realistic size, where 4-row tiles and the prefetch run over many blocks.
TEST(Matmul, Avx512LargeGemvMatchesReference) {
  LLMESH_REQUIRE_AVX512();
  ThreadPool pool(2);
  for (DType dtype : {DType::BF16, DType::Q8_0, DType::Q4_0})
    check_against_reference({dtype, 1030, 3072, 1}, avx512::matmul, avx512::matmul_quantizes_activations(dtype, 1),
                            pool);
  for (DType dtype : {DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::IQ4_XS})
    for (int64_t num_tokens : {1, 2, 4, 5})
      check_against_reference({dtype, 1030, 3072, num_tokens}, avx512::matmul,
                              avx512::matmul_quantizes_activations(dtype, num_tokens), pool);
}

TEST(Matmul, Avx2LargeGemvMatchesReference) {
  LLMESH_REQUIRE_AVX2();
  ThreadPool pool(2);
  for (DType dtype : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0})
    for (int64_t num_tokens : {1, 2, 4})
      check_against_reference({dtype, 1030, 3072, num_tokens}, avx2::matmul,
                              avx2::matmul_quantizes_activations(dtype, num_tokens), pool);
}

// Every token count from 1 to 13 (each tile width and its remainders) and the few around the
// prefill switch, on rows that are not a multiple of any row tile and, for float types, inputs
// that are not a multiple of the 8-wide vectors.
TEST(Matmul, Avx2OddShapesMatchReference) {
  LLMESH_REQUIRE_AVX2();
  ThreadPool pool(2);
  std::vector<int64_t> token_counts;
  for (int64_t t = 1; t <= 13; ++t) token_counts.push_back(t);
  for (int64_t t : {31, 32, 33, 127, 128, 129}) token_counts.push_back(t);
  for (DType dtype : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0}) {
    const bool quantized = dtype_block_size(dtype) > 1;
    const std::vector<std::pair<int64_t, int64_t>> shapes =
        quantized ? std::vector<std::pair<int64_t, int64_t>>{{5, 32}, {13, 96}, {19, 288}}
                  : std::vector<std::pair<int64_t, int64_t>>{{5, 3}, {13, 13}, {19, 263}};
    for (auto [num_out, num_in] : shapes)
      for (int64_t num_tokens : token_counts)
        check_against_reference({dtype, num_out, num_in, num_tokens}, avx2::matmul,
                                avx2::matmul_quantizes_activations(dtype, num_tokens), pool);
  }
}

// A dtype the AVX2 dispatch does not know (an out-of-range value standing in for one added later,
// e.g. a K-quant) goes to ref::matmul, which rejects this one: it is never misread as another dtype.
TEST(Matmul, Avx2UnknownDtypeGoesToReference) {
  LLMESH_REQUIRE_AVX2();
  ThreadPool pool(1);
  float data[64] = {}, x[32] = {}, y[2] = {};
  const Tensor w{"w", DType(200), {2, 32}, data};
  EXPECT_THROW(avx2::matmul(w, x, y, 1, pool), Error);
}

TEST(Matmul, RejectsNon2dWeight) {
  ThreadPool pool(1);
  float data[8] = {};
  const Tensor w{"blk.0.bad", DType::F32, {8}, data};
  float x[8] = {}, y[8] = {};
  EXPECT_THROW(CpuBackend(pool).matmul(w, x, y, 1), Error);
}

}  // namespace
}  // namespace llmesh::kernels
