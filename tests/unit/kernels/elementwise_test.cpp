// rmsnorm, silu_mul, softmax, add: the AVX-512 and AVX2 versions against the reference and
// against their formulas, on lengths that exercise the masked tails.
#include <gtest/gtest.h>

#include <cmath>

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

const int64_t kLengths[] = {1, 15, 16, 17, 33, 1000, 1027};

using RmsnormFn = void (*)(const float*, const float*, float*, int64_t, int64_t, float);
using SiluMulFn = void (*)(const float*, const float*, float*, int64_t);
using SoftmaxFn = void (*)(float*, int64_t);
using AddFn = void (*)(float*, const float*, int64_t);

void check_rmsnorm(RmsnormFn fast) {
  for (int64_t dim : kLengths) {
    SCOPED_TRACE(dim);
    const int64_t num_rows = 3;
    const std::vector<float> x = random_floats(size_t(num_rows * dim), 1, -3.0f, 3.0f);
    const std::vector<float> weight = random_floats(size_t(dim), 2, 0.5f, 1.5f);
    GuardedOutput expected(x.size()), actual(x.size());
    ref::rmsnorm(x.data(), weight.data(), expected.data(), num_rows, dim, 1e-6f);
    fast(x.data(), weight.data(), actual.data(), num_rows, dim, 1e-6f);
    EXPECT_LT(nmse(actual.data(), expected.data(), x.size()), 1e-12);
    EXPECT_TRUE(actual.guard_intact());
    // Formula, on the last row's last element.
    double sum_squares = 0.0;
    for (int64_t i = 0; i < dim; ++i) sum_squares += double(x[size_t(2 * dim + i)]) * x[size_t(2 * dim + i)];
    const double want = x.back() / std::sqrt(sum_squares / double(dim) + 1e-6) * weight.back();
    EXPECT_NEAR(expected.data()[x.size() - 1], want, 1e-5 * (1.0 + std::fabs(want)));
  }
}

TEST(Rmsnorm, Avx512MatchesReferenceAndFormula) {
  LLMESH_REQUIRE_AVX512();
  check_rmsnorm(avx512::rmsnorm);
}

TEST(Rmsnorm, Avx2MatchesReferenceAndFormula) {
  LLMESH_REQUIRE_AVX2();
  check_rmsnorm(avx2::rmsnorm);
}

TEST(Rmsnorm, InPlace) {
  std::vector<float> x = random_floats(1027, 3);
  const std::vector<float> weight(1027, 1.0f);
  std::vector<float> expected(x.size());
  ThreadPool pool(1);
  CpuBackend cpu(pool);
  cpu.rmsnorm(x.data(), weight.data(), expected.data(), 1, 1027, 1e-5f);
  cpu.rmsnorm(x.data(), weight.data(), x.data(), 1, 1027, 1e-5f);
  EXPECT_EQ(x, expected);
}

void check_silu_mul(SiluMulFn fast) {
  for (int64_t n : kLengths) {
    SCOPED_TRACE(n);
    const std::vector<float> gate = random_floats(size_t(n), 4, -12.0f, 12.0f);
    const std::vector<float> up = random_floats(size_t(n), 5, -2.0f, 2.0f);
    GuardedOutput expected(static_cast<size_t>(n)), actual(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      expected.data()[i] = float(gate[size_t(i)] / (1.0 + std::exp(-double(gate[size_t(i)]))) * up[size_t(i)]);
    fast(gate.data(), up.data(), actual.data(), n);
    EXPECT_LT(nmse(actual.data(), expected.data(), size_t(n)), 1e-12);
    EXPECT_TRUE(actual.guard_intact());
    ref::silu_mul(gate.data(), up.data(), actual.data(), n);
    EXPECT_LT(nmse(actual.data(), expected.data(), size_t(n)), 1e-12);
  }
}

TEST(SiluMul, Avx512MatchesFormula) {
  LLMESH_REQUIRE_AVX512();
  check_silu_mul(avx512::silu_mul);
}

TEST(SiluMul, Avx2MatchesFormula) {
  LLMESH_REQUIRE_AVX2();
  check_silu_mul(avx2::silu_mul);
}

TEST(SiluMul, ExtremeGates) {
  const float gate[4] = {-200.0f, -90.0f, 90.0f, 0.0f};
  const float up[4] = {1.0f, 1.0f, 2.0f, 5.0f};
  float out[4];
  ThreadPool pool(1);
  CpuBackend(pool).silu_mul(gate, up, out, 4);
  EXPECT_NEAR(out[0], 0.0f, 1e-30f);
  EXPECT_NEAR(out[1], 0.0f, 1e-30f);
  EXPECT_FLOAT_EQ(out[2], 180.0f);
  EXPECT_EQ(out[3], 0.0f);
}

// gpt-oss's activation at its alpha and limit: inside the limits, and clamped (gate above it only).
TEST(ClampedSwiglu, MatchesFormula) {
  const float alpha = 1.702f, limit = 7.0f;
  const float gate[6] = {-9.0f, -1.0f, 0.5f, 3.0f, 7.5f, 20.0f};
  const float up[6] = {-8.0f, 0.25f, -1.0f, 6.5f, 9.0f, -20.0f};
  float out[6];
  ThreadPool pool(1);
  CpuBackend(pool).clamped_swiglu(gate, up, out, 6, alpha, limit);
  for (int i = 0; i < 6; ++i) {
    const double g = std::min(double(gate[i]), 7.0), u = std::max(-7.0, std::min(double(up[i]), 7.0));
    EXPECT_NEAR(out[i], g / (1.0 + std::exp(-1.702 * g)) * (u + 1.0), 1e-5) << i;
  }
  EXPECT_NEAR(out[4], 7.0 / (1.0 + std::exp(-1.702 * 7.0)) * 8.0, 1e-5);  // both clamped
  EXPECT_NEAR(out[0], -9.0 / (1.0 + std::exp(1.702 * 9.0)) * -6.0, 1e-9);  // a gate below -limit is not
  float in_place[6];
  std::copy(gate, gate + 6, in_place);
  CpuBackend(pool).clamped_swiglu(in_place, up, in_place, 6, alpha, limit);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(in_place[i], out[i]);
}

void check_softmax(SoftmaxFn fast) {
  for (int64_t n : kLengths) {
    SCOPED_TRACE(n);
    // Logits far outside exp's range: a naive softmax would overflow to inf/inf.
    std::vector<float> logits = random_floats(size_t(n), 6, 900.0f, 1000.0f);
    std::vector<double> want(static_cast<size_t>(n));
    double max_logit = -1e300, sum = 0.0;
    for (float v : logits) max_logit = std::max(max_logit, double(v));
    for (int64_t i = 0; i < n; ++i) sum += want[size_t(i)] = std::exp(double(logits[size_t(i)]) - max_logit);
    GuardedOutput actual(static_cast<size_t>(n));
    std::copy(logits.begin(), logits.end(), actual.data());
    fast(actual.data(), n);
    double total = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_NEAR(actual.data()[i], want[size_t(i)] / sum, 1e-6) << i;
      total += actual.data()[i];
    }
    EXPECT_NEAR(total, 1.0, 1e-5);
    EXPECT_TRUE(actual.guard_intact());
    ref::softmax_inplace(logits.data(), n);
    EXPECT_LT(nmse(actual.data(), logits.data(), size_t(n)), 1e-12);
  }
}

TEST(Softmax, Avx512MatchesFormulaAndIsStable) {
  LLMESH_REQUIRE_AVX512();
  check_softmax(avx512::softmax_inplace);
}

TEST(Softmax, Avx2MatchesFormulaAndIsStable) {
  LLMESH_REQUIRE_AVX2();
  check_softmax(avx2::softmax_inplace);
}

// -inf anywhere, including the masked tail of the last vector and a whole -inf vector.
TEST(Softmax, Avx2MinusInfinityGetsZero) {
  LLMESH_REQUIRE_AVX2();
  for (int64_t n : {int64_t(3), int64_t(8), int64_t(13), int64_t(21)}) {
    std::vector<float> x(size_t(n), -INFINITY);
    x[0] = 2.0f;
    x[size_t(n - 1)] = 2.0f;
    avx2::softmax_inplace(x.data(), n);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(x[size_t(i)], i == 0 || i == n - 1 ? 0.5f : 0.0f) << n << " " << i;
  }
}

TEST(Softmax, MinusInfinityGetsZero) {
  float x[5] = {1.0f, -INFINITY, 1.0f, -INFINITY, 1.0f};
  ThreadPool pool(1);
  CpuBackend(pool).softmax_inplace(x, 1, 5);
  EXPECT_FLOAT_EQ(x[0], 1.0f / 3.0f);
  EXPECT_EQ(x[1], 0.0f);
  EXPECT_EQ(x[3], 0.0f);
}

void check_add_inplace(AddFn fast) {
  for (int64_t n : kLengths) {
    const std::vector<float> x = random_floats(size_t(n), 7);
    const std::vector<float> y0 = random_floats(size_t(n), 8);
    GuardedOutput y(static_cast<size_t>(n));
    std::copy(y0.begin(), y0.end(), y.data());
    fast(y.data(), x.data(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y.data()[i], y0[size_t(i)] + x[size_t(i)]);
    EXPECT_TRUE(y.guard_intact());
  }
}

TEST(AddInplace, Avx512Exact) {
  LLMESH_REQUIRE_AVX512();
  check_add_inplace(avx512::add_inplace);
}

TEST(AddInplace, Avx2Exact) {
  LLMESH_REQUIRE_AVX2();
  check_add_inplace(avx2::add_inplace);
}

}  // namespace
}  // namespace llmesh::kernels
