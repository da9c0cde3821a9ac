// Helpers for the kernel tests: random data, normalized MSE, guarded output buffers.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "kernels/cpu/cpu_features.h"

namespace llmesh::kernels::testing {

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// sum((a - b)^2) / sum(b^2): 0 for identical, ~1 for unrelated. b is the reference.
inline double nmse(const float* a, const float* b, size_t n) {
  double err = 0.0, ref = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double d = double(a[i]) - double(b[i]);
    err += d * d;
    ref += double(b[i]) * double(b[i]);
  }
  return ref == 0.0 ? err : err / ref;
}

// An output buffer of n floats followed by guard floats with a fixed bit pattern,
// to catch a kernel writing past the end of its output.
class GuardedOutput {
 public:
  static constexpr size_t kGuardFloats = 64;
  static constexpr uint32_t kGuardBits = 0x7fc0dead;  // a quiet NaN no kernel produces
  explicit GuardedOutput(size_t n, float fill = 0.0f) : n_(n), data_(n + kGuardFloats, fill) {
    for (size_t i = n; i < data_.size(); ++i) std::memcpy(&data_[i], &kGuardBits, 4);
  }
  float* data() { return data_.data(); }
  const float* data() const { return data_.data(); }
  size_t size() const { return n_; }
  bool guard_intact() const {
    for (size_t i = n_; i < data_.size(); ++i) {
      uint32_t bits;
      std::memcpy(&bits, &data_[i], 4);
      if (bits != kGuardBits) return false;
    }
    return true;
  }

 private:
  size_t n_;
  std::vector<float> data_;
};

#define LLMESH_REQUIRE_AVX512()                                                   \
  do {                                                                            \
    if (!::llmesh::kernels::cpu::has_avx512_kernels()) GTEST_SKIP() << "no AVX-512 BF16/VNNI on this CPU"; \
  } while (0)

#define LLMESH_REQUIRE_AVX2()                                                                        \
  do {                                                                                               \
    if (!::llmesh::kernels::cpu::has_avx2_kernels()) GTEST_SKIP() << "no AVX2/FMA/F16C on this CPU"; \
  } while (0)

}  // namespace llmesh::kernels::testing
