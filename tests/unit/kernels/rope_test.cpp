// Rotary embeddings against the direct cos/sin formula for both pair layouts, and
// the property that makes them useful: q.k after rotation depends only on the offset.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/cpu/avx2_ops.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/ref/ref_ops.h"
#include "kernel_test_util.h"

namespace llmesh::kernels {
namespace {

std::vector<float> inv_freq_for(int64_t head_dim, double base) {
  std::vector<float> f(size_t(head_dim / 2));
  for (int64_t i = 0; i < head_dim / 2; ++i) f[size_t(i)] = float(std::pow(base, -2.0 * double(i) / double(head_dim)));
  return f;
}

TEST(Rope, MatchesDirectFormulaBothLayouts) {
  const int64_t num_tokens = 5, num_heads = 3, head_dim = 64;
  const int32_t positions[num_tokens] = {0, 1, 7, 513, 40000};
  const std::vector<float> inv_freq = inv_freq_for(head_dim, 1e6);
  const std::vector<float> x = testing::random_floats(size_t(num_tokens * num_heads * head_dim), 11);
  for (bool interleaved : {false, true}) {
    SCOPED_TRACE(interleaved ? "interleaved" : "neox");
    std::vector<float> actual = x;
    best_cpu_kernels().rope_inplace(actual.data(), num_tokens, num_heads, head_dim, head_dim, positions, inv_freq.data(), interleaved);
    for (int64_t t = 0; t < num_tokens; ++t) {
      for (int64_t h = 0; h < num_heads; ++h) {
        const float* in = x.data() + (t * num_heads + h) * head_dim;
        const float* out = actual.data() + (t * num_heads + h) * head_dim;
        for (int64_t i = 0; i < head_dim / 2; ++i) {
          const double theta = double(positions[t]) * double(inv_freq[size_t(i)]);
          const int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + head_dim / 2;
          const double want_a = in[a] * std::cos(theta) - in[b] * std::sin(theta);
          const double want_b = in[b] * std::cos(theta) + in[a] * std::sin(theta);
          ASSERT_NEAR(out[a], want_a, 1e-5) << "t=" << t << " h=" << h << " i=" << i;
          ASSERT_NEAR(out[b], want_b, 1e-5) << "t=" << t << " h=" << h << " i=" << i;
        }
      }
    }
    // Position 0 is the identity.
    for (int64_t i = 0; i < num_heads * head_dim; ++i) EXPECT_EQ(actual[size_t(i)], x[size_t(i)]);
  }
}

TEST(Rope, DotProductDependsOnlyOnRelativePosition) {
  const int64_t head_dim = 128;
  const std::vector<float> inv_freq = inv_freq_for(head_dim, 10000.0);
  const std::vector<float> q0 = testing::random_floats(size_t(head_dim), 12);
  const std::vector<float> k0 = testing::random_floats(size_t(head_dim), 13);
  auto rotated_dot = [&](int32_t q_pos, int32_t k_pos, bool interleaved) {
    std::vector<float> q = q0, k = k0;
    best_cpu_kernels().rope_inplace(q.data(), 1, 1, head_dim, head_dim, &q_pos, inv_freq.data(), interleaved);
    best_cpu_kernels().rope_inplace(k.data(), 1, 1, head_dim, head_dim, &k_pos, inv_freq.data(), interleaved);
    double dot = 0.0;
    for (int64_t i = 0; i < head_dim; ++i) dot += double(q[size_t(i)]) * k[size_t(i)];
    return dot;
  };
  for (bool interleaved : {false, true}) {
    EXPECT_NEAR(rotated_dot(10, 3, interleaved), rotated_dot(1007, 1000, interleaved), 1e-4);
    EXPECT_GT(std::fabs(rotated_dot(10, 3, interleaved) - rotated_dot(10, 4, interleaved)), 1e-4);
  }
}

// The AVX2 rotation against the reference: the same f32 angles' cos/sin and products, so equal up
// to FMA rounding. head_dim 40 is not a multiple of 16: the reference itself runs.
TEST(Rope, Avx2MatchesReference) {
  LLMESH_REQUIRE_AVX2();
  const int32_t positions[4] = {0, 3, 4097, 131000};
  for (int64_t head_dim : {16, 40, 64, 128, 256}) {
    const std::vector<float> inv_freq = inv_freq_for(head_dim, 1e6);
    const std::vector<float> x = testing::random_floats(size_t(4 * 5 * head_dim), 21);
    for (bool interleaved : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "head_dim " << head_dim << (interleaved ? " interleaved" : " neox"));
      std::vector<float> expected = x, actual = x;
      ref::rope_inplace(expected.data(), 4, 5, head_dim, head_dim, positions, inv_freq.data(), interleaved);
      avx2::rope_inplace(actual.data(), 4, 5, head_dim, head_dim, positions, inv_freq.data(), interleaved);
      EXPECT_LT(testing::nmse(actual.data(), expected.data(), x.size()), 1e-12);
      // Position 0 is the identity, exactly.
      for (int64_t i = 0; i < 5 * head_dim; ++i) ASSERT_EQ(actual[size_t(i)], x[size_t(i)]);
    }
  }
}

// Partial rotary (GLM-4.5, DeepSeek): only the first rotary_dim dims rotate, in pairs of
// their own (i, i + rotary_dim/2) or (2i, 2i + 1), with inv_freq over rotary_dim; the rest
// pass through bit-exactly. Every kernel family, with rotary dims that take the AVX2 path
// (multiples of 16) and ones that fall back to the reference.
TEST(Rope, PartialRotaryRotatesOnlyTheFirstDims) {
  const int64_t num_tokens = 4, num_heads = 3;
  const int32_t positions[num_tokens] = {0, 2, 517, 90000};
  struct Shape {
    int64_t head_dim, rotary_dim;
  };
  for (const Shape shape :
       {Shape{32, 16}, Shape{64, 32}, Shape{128, 64}, Shape{40, 20}, Shape{64, 8}, Shape{32, 32}}) {
    const int64_t head_dim = shape.head_dim, rotary_dim = shape.rotary_dim;
    const std::vector<float> inv_freq = inv_freq_for(rotary_dim, 1e4);
    const std::vector<float> x = testing::random_floats(size_t(num_tokens * num_heads * head_dim), 31);
    for (bool interleaved : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "head_dim " << head_dim << " rotary_dim " << rotary_dim
                                        << (interleaved ? " interleaved" : " neox"));
      std::vector<std::pair<const char*, std::vector<float>>> results;
      std::vector<float> r = x;
      ref::rope_inplace(r.data(), num_tokens, num_heads, head_dim, rotary_dim, positions, inv_freq.data(), interleaved);
      results.emplace_back("ref", r);
      r = x;
      best_cpu_kernels().rope_inplace(r.data(), num_tokens, num_heads, head_dim, rotary_dim, positions,
                                      inv_freq.data(), interleaved);
      results.emplace_back("best", r);
      if (cpu::has_avx2_kernels()) {
        r = x;
        avx2::rope_inplace(r.data(), num_tokens, num_heads, head_dim, rotary_dim, positions, inv_freq.data(),
                           interleaved);
        results.emplace_back("avx2", r);
      }
      for (const auto& [family, actual] : results) {
        SCOPED_TRACE(family);
        for (int64_t t = 0; t < num_tokens; ++t) {
          for (int64_t h = 0; h < num_heads; ++h) {
            const float* in = x.data() + (t * num_heads + h) * head_dim;
            const float* out = actual.data() + (t * num_heads + h) * head_dim;
            for (int64_t i = 0; i < rotary_dim / 2; ++i) {
              const double theta = double(positions[t]) * double(inv_freq[size_t(i)]);
              const int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + rotary_dim / 2;
              ASSERT_NEAR(out[a], in[a] * std::cos(theta) - in[b] * std::sin(theta), 1e-5) << "t=" << t << " i=" << i;
              ASSERT_NEAR(out[b], in[b] * std::cos(theta) + in[a] * std::sin(theta), 1e-5) << "t=" << t << " i=" << i;
            }
            for (int64_t d = rotary_dim; d < head_dim; ++d) ASSERT_EQ(out[d], in[d]) << "pass-through dim " << d;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace llmesh::kernels
