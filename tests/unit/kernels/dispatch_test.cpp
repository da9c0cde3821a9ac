// The dispatcher picks AVX-512 when the CPU has it, unless LLMESH_KERNELS=ref forces the reference.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

#include "kernels/ops.h"
#include "kernel_test_util.h"

namespace llmesh::kernels {
namespace {

TEST(Dispatch, BackendFollowsCpuFeaturesAndEnvironment) {
  const char* forced = std::getenv("LLMESH_KERNELS");
  const bool force_ref = forced != nullptr && std::string_view(forced) == "ref";
  const std::string_view want = !force_ref && cpu::has_avx512_kernels() ? "avx512" : "ref";
  EXPECT_EQ(std::string_view(backend_name()), want);
}

}  // namespace
}  // namespace llmesh::kernels
