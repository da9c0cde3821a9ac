// rmsnorm, silu_mul, softmax, add: the AVX-512 versions against the reference and
// against their formulas, on lengths that exercise the masked tails.
#include <gtest/gtest.h>

#include <cmath>

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

TEST(Rmsnorm, Avx512MatchesReferenceAndFormula) {
  LLMESH_REQUIRE_AVX512();
  for (int64_t dim : kLengths) {
    SCOPED_TRACE(dim);
    const int64_t num_rows = 3;
    const std::vector<float> x = random_floats(size_t(num_rows * dim), 1, -3.0f, 3.0f);
    const std::vector<float> weight = random_floats(size_t(dim), 2, 0.5f, 1.5f);
    GuardedOutput expected(x.size()), actual(x.size());
    ref::rmsnorm(x.data(), weight.data(), expected.data(), num_rows, dim, 1e-6f);
    avx512::rmsnorm(x.data(), weight.data(), actual.data(), num_rows, dim, 1e-6f);
    EXPECT_LT(nmse(actual.data(), expected.data(), x.size()), 1e-12);
    EXPECT_TRUE(actual.guard_intact());
    // Formula, on the last row's last element.
    double sum_squares = 0.0;
    for (int64_t i = 0; i < dim; ++i) sum_squares += double(x[size_t(2 * dim + i)]) * x[size_t(2 * dim + i)];
    const double want = x.back() / std::sqrt(sum_squares / double(dim) + 1e-6) * weight.back();
    EXPECT_NEAR(expected.data()[x.size() - 1], want, 1e-5 * (1.0 + std::fabs(want)));
  }
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

TEST(SiluMul, Avx512MatchesFormula) {
  LLMESH_REQUIRE_AVX512();
  for (int64_t n : kLengths) {
    SCOPED_TRACE(n);
    const std::vector<float> gate = random_floats(size_t(n), 4, -12.0f, 12.0f);
    const std::vector<float> up = random_floats(size_t(n), 5, -2.0f, 2.0f);
    GuardedOutput expected(static_cast<size_t>(n)), actual(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      expected.data()[i] = float(gate[size_t(i)] / (1.0 + std::exp(-double(gate[size_t(i)]))) * up[size_t(i)]);
    avx512::silu_mul(gate.data(), up.data(), actual.data(), n);
    EXPECT_LT(nmse(actual.data(), expected.data(), size_t(n)), 1e-12);
    EXPECT_TRUE(actual.guard_intact());
    ref::silu_mul(gate.data(), up.data(), actual.data(), n);
    EXPECT_LT(nmse(actual.data(), expected.data(), size_t(n)), 1e-12);
  }
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

TEST(Softmax, Avx512MatchesFormulaAndIsStable) {
  LLMESH_REQUIRE_AVX512();
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
    avx512::softmax_inplace(actual.data(), n);
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

TEST(Softmax, MinusInfinityGetsZero) {
  float x[5] = {1.0f, -INFINITY, 1.0f, -INFINITY, 1.0f};
  ThreadPool pool(1);
  CpuBackend(pool).softmax_inplace(x, 1, 5);
  EXPECT_FLOAT_EQ(x[0], 1.0f / 3.0f);
  EXPECT_EQ(x[1], 0.0f);
  EXPECT_EQ(x[3], 0.0f);
}

TEST(AddInplace, Avx512Exact) {
  LLMESH_REQUIRE_AVX512();
  for (int64_t n : kLengths) {
    const std::vector<float> x = random_floats(size_t(n), 7);
    const std::vector<float> y0 = random_floats(size_t(n), 8);
    GuardedOutput y(static_cast<size_t>(n));
    std::copy(y0.begin(), y0.end(), y.data());
    avx512::add_inplace(y.data(), x.data(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y.data()[i], y0[size_t(i)] + x[size_t(i)]);
    EXPECT_TRUE(y.guard_intact());
  }
}

}  // namespace
}  // namespace llmesh::kernels
