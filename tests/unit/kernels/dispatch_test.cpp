// Which kernel family the CPU backend runs: the best the CPU supports (AVX-512, else AVX2, else
// the reference), unless LLMESH_KERNELS names another one the CPU can run; anything else is
// explained once and falls back to the best.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <string_view>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/ops.h"
#include "kernel_test_util.h"

namespace llmesh::kernels {
namespace {

// The rules, written out independently of choose_cpu_kernels.
std::string_view expected_family(std::string_view requested, bool has_avx512, bool has_avx2) {
  const std::string_view best = has_avx512 ? "avx512" : has_avx2 ? "avx2" : "ref";
  if (requested == "ref") return "ref";
  if (requested == "avx512" && has_avx512) return "avx512";
  if (requested == "avx2" && has_avx2) return "avx2";
  return best;
}

TEST(Dispatch, BackendFollowsCpuFeaturesAndEnvironment) {
  const char* forced = std::getenv("LLMESH_KERNELS");
  const std::string_view want =
      expected_family(forced != nullptr ? forced : "", cpu::has_avx512_kernels(), cpu::has_avx2_kernels());
  EXPECT_EQ(std::string_view(backend_name()), want);
  EXPECT_EQ(std::string_view(best_cpu_kernels().name), want);
}

TEST(Dispatch, CpuFeaturesAreConsistent) {
  // Every CPU with the AVX-512 set this build uses also has AVX2, FMA and F16C.
  if (cpu::has_avx512_kernels()) {
    EXPECT_TRUE(cpu::has_avx2_kernels());
  }
}

TEST(Dispatch, RequestAndFeaturesPickTheFamily) {
  const char* requests[] = {nullptr, "", "ref", "avx2", "avx512", "AVX2", "fast", "avx"};
  const bool feature_sets[][2] = {{true, true}, {false, true}, {false, false}};  // {avx512, avx2}
  for (const char* requested : requests) {
    for (const auto& features : feature_sets) {
      const bool has_avx512 = features[0], has_avx2 = features[1];
      const std::string_view name = requested != nullptr ? requested : "";
      SCOPED_TRACE(::testing::Message() << "LLMESH_KERNELS=" << (requested ? requested : "(unset)")
                                        << " avx512=" << has_avx512 << " avx2=" << has_avx2);
      const CpuKernelsChoice choice = choose_cpu_kernels(requested, has_avx512, has_avx2);
      ASSERT_NE(choice.kernels, nullptr);
      EXPECT_EQ(std::string_view(choice.kernels->name), expected_family(name, has_avx512, has_avx2));
      // A warning exactly when the request was not honoured; it names the request and the fallback.
      const bool honoured = name.empty() || name == choice.kernels->name;
      EXPECT_EQ(choice.warning.empty(), honoured) << choice.warning;
      if (!honoured) {
        EXPECT_NE(choice.warning.find(std::string(name)), std::string::npos) << choice.warning;
        EXPECT_NE(choice.warning.find(choice.kernels->name), std::string::npos) << choice.warning;
      }
    }
  }
  // The reference family is the one reference_cpu_kernels() returns.
  EXPECT_EQ(choose_cpu_kernels("ref", true, true).kernels, &reference_cpu_kernels());
}

TEST(Dispatch, BackendNameFollowsTheFamily) {
  ThreadPool pool(1);
  EXPECT_STREQ(CpuBackend(pool, *choose_cpu_kernels("avx2", false, true).kernels).name(), "cpu/avx2");
  EXPECT_STREQ(CpuBackend(pool, *choose_cpu_kernels("avx512", true, true).kernels).name(), "cpu/avx512");
  EXPECT_STREQ(CpuBackend(pool, *choose_cpu_kernels("ref", true, true).kernels).name(), "cpu/ref");
}

}  // namespace
}  // namespace llmesh::kernels
