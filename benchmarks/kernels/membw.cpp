// llmesh_membw: the machine's read bandwidth, the roofline decode speed is measured against.
//
// N threads (default: all cores) each stream their share of a 1 GiB buffer with
// 512-bit loads (256-bit without AVX-512); prints the best of several passes in GB/s (1e9 bytes/s),
// by wall clock (the roofline figure on a quiet machine) and by thread CPU time.
// Usage: llmesh_membw [num_threads] [size_mib] [num_passes]
#include <immintrin.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "core/thread_pool.h"

namespace {

__attribute__((target("avx512f"))) float sum_avx512(const float* data, size_t n) {
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  for (size_t i = 0; i + 64 <= n; i += 64)
    for (int u = 0; u < 4; ++u) acc[u] = _mm512_add_ps(acc[u], _mm512_load_ps(data + i + 16 * u));
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
}

__attribute__((target("avx2"))) float sum_avx2(const float* data, size_t n) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  for (size_t i = 0; i + 32 <= n; i += 32)
    for (int u = 0; u < 4; ++u) acc[u] = _mm256_add_ps(acc[u], _mm256_load_ps(data + i + 8 * u));
  float lanes[8];
  _mm256_storeu_ps(lanes, _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  const int num_threads = argc > 1 ? std::atoi(argv[1]) : 0;
  const size_t size_mib = argc > 2 ? size_t(std::atol(argv[2])) : 1024;
  const int num_passes = argc > 3 ? std::atoi(argv[3]) : 10;
  llmesh::ThreadPool pool(num_threads);
  const size_t num_floats = size_mib * 1024 * 1024 / sizeof(float);
  // Backed by 2 MiB pages where the kernel allows, like weights loaded with --weights ram:
  // the roofline is what the best page size reaches.
  const size_t num_bytes = num_floats * sizeof(float);
  void* area = ::mmap(nullptr, num_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (area == MAP_FAILED) {
    std::perror("mmap");
    return 1;
  }
  ::madvise(area, num_bytes, MADV_HUGEPAGE);
  float* data = static_cast<float*>(area);
  const bool use_avx512 = __builtin_cpu_supports("avx512f");
  const int64_t num_chunks = int64_t(num_floats / 64);  // 256-byte chunks, so every share stays aligned
  // First touch from the threads that will read, so pages land near them.
  pool.parallel_for(int64_t(num_floats), 1 << 20, [&](int64_t begin, int64_t end) {
    std::fill(data + begin, data + end, 1.0f);
  });
  // Wall-clock GB/s, and GB/s from the slowest thread's CPU time: on a shared machine a pass may be
  // preempted, which the CPU-time figure does not count (the bandwidth others take still shows).
  double best_wall_gbps = 0.0, best_cpu_gbps = 0.0;
  float sink = 0.0f;
  const double total_bytes = double(num_floats * sizeof(float));
  for (int pass = 0; pass < num_passes; ++pass) {
    std::vector<double> cpu_seconds(size_t(pool.num_threads()), 0.0);
    const auto start = std::chrono::steady_clock::now();
    pool.run([&](int thread, int num) {
      const int64_t begin = num_chunks * thread / num, end = num_chunks * (thread + 1) / num;
      const float* p = data + begin * 64;
      const size_t n = size_t(end - begin) * 64;
      const double cpu_start = thread_cpu_seconds();
      const float s = use_avx512 ? sum_avx512(p, n) : sum_avx2(p, n);
      cpu_seconds[size_t(thread)] = thread_cpu_seconds() - cpu_start;
      if (s == -1.0f) sink += s;  // keep the loads alive
    });
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best_wall_gbps = std::max(best_wall_gbps, total_bytes / wall / 1e9);
    best_cpu_gbps = std::max(best_cpu_gbps, total_bytes / *std::max_element(cpu_seconds.begin(), cpu_seconds.end()) / 1e9);
  }
  std::printf("membw: %d threads, %zu MiB, %s loads, best of %d: %.1f GB/s (wall clock), %.1f GB/s (thread CPU time)%s\n",
              pool.num_threads(), size_mib, use_avx512 ? "512-bit" : "256-bit", num_passes, best_wall_gbps,
              best_cpu_gbps, sink != 0.0f ? " " : "");
  ::munmap(area, num_bytes);
  return 0;
}
