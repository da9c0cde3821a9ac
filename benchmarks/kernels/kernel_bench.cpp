// llmesh_kernel_bench: speed of the dispatched kernels on Qwen3-0.6B-shaped problems.
//
//  * gemv (1 token): GB/s of weights streamed from DRAM, per dtype, on the model's matrices (decode is
//    bandwidth bound; compare with llmesh_membw).
//  * prefill matmul (512 tokens): GFLOP/s.
//  * paged attention: prefill of 512 tokens and decode against a 4096-token context, and that decode
//    under a 1024-token sliding window.
// Weights hold random values (quantized blocks get random bits and a small scale): speed does not
// depend on them.
// Usage: llmesh_kernel_bench [num_threads] [min_seconds_per_case] [options]
//   --kernels=avx2,ref      kernel families to run, one after the other (default: the dispatched one;
//                           "all" = every family this CPU runs); each family's rows are prefixed by its name
//   --dtypes=bf16,q8_0      weight dtypes (default: bf16,f16,q8_0,q4_0,f32; also q4_k,q5_k,q6_k,iq4_xs)
//   --only=gemv,prefill,small,attention   sections (default: all)
// e.g. llmesh_kernel_bench 2 0.3 --kernels=avx2,ref --dtypes=bf16,q8_0,q4_0 --only=gemv,prefill
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/ops.h"

using namespace llmesh;

namespace {

// On a shared machine a long run gets preempted; with one thread, the thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID) measures the kernel itself. With more threads, wall time.
bool g_use_cpu_time = false;

double now_seconds() {
  timespec ts;
  clock_gettime(g_use_cpu_time ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// What to run (command-line options).
struct Options {
  std::vector<DType> dtypes = {DType::BF16, DType::F16, DType::Q8_0, DType::Q4_0, DType::F32};
  std::vector<std::string> sections = {"gemv", "prefill", "small", "attention"};
  bool runs(std::string_view section) const {
    return std::find(sections.begin(), sections.end(), section) != sections.end();
  }
};

std::vector<std::string> split_commas(std::string_view list) {
  std::vector<std::string> parts;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    parts.emplace_back(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return parts;
}

struct Timer {
  // Runs fn until min_seconds have passed (at least 3 times); returns the fastest run in seconds.
  template <typename Fn>
  static double best_of(double min_seconds, Fn&& fn) {
    fn();  // warm-up: page faults, caches
    double best = 1e30, total = 0.0;
    for (int i = 0; i < 3 || total < min_seconds; ++i) {
      const double start = now_seconds();
      fn();
      const double s = now_seconds() - start;
      best = std::min(best, s);
      total += s;
    }
    return best;
  }
};

// Random weight bytes for `dtype`, with every scale/element a finite small number.
std::vector<uint8_t> random_weights(DType dtype, int64_t rows, int64_t cols, std::mt19937& rng) {
  std::vector<uint8_t> bytes(size_t(rows) * dtype_row_bytes(dtype, cols));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const uint16_t scale_f16 = f32_to_f16(0.01f);
  switch (dtype) {
    case DType::F32: {
      auto* f = reinterpret_cast<float*>(bytes.data());
      for (size_t i = 0; i < bytes.size() / 4; ++i) f[i] = uniform(rng) * 0.05f;
      break;
    }
    case DType::F16:
    case DType::BF16: {
      auto* h = reinterpret_cast<uint16_t*>(bytes.data());
      const uint16_t table[4] = {dtype == DType::F16 ? f32_to_f16(0.02f) : f32_to_bf16(0.02f),
                                 dtype == DType::F16 ? f32_to_f16(-0.03f) : f32_to_bf16(-0.03f),
                                 dtype == DType::F16 ? f32_to_f16(0.01f) : f32_to_bf16(0.01f),
                                 dtype == DType::F16 ? f32_to_f16(-0.005f) : f32_to_bf16(-0.005f)};
      uint32_t state = 12345;
      for (size_t i = 0; i < bytes.size() / 2; ++i) {
        state = state * 1664525u + 1013904223u;
        h[i] = table[state >> 30];
      }
      break;
    }
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
    case DType::IQ4_XS: {
      uint32_t state = 777;
      for (auto& b : bytes) {
        state = state * 1664525u + 1013904223u;
        b = uint8_t(state >> 24);
      }
      // The f16 scale fields of each block (core/quant_blocks.h), finite.
      const std::vector<size_t> scale_offsets = dtype == DType::Q6_K                                ? std::vector<size_t>{208}
                                                : dtype == DType::Q4_K || dtype == DType::Q5_K ? std::vector<size_t>{0, 2}
                                                                                               : std::vector<size_t>{0};
      const size_t block_bytes = dtype_block_bytes(dtype);
      for (size_t off = 0; off < bytes.size(); off += block_bytes)
        for (size_t field : scale_offsets) std::memcpy(&bytes[off + field], &scale_f16, 2);
      break;
    }
    default:  // the bench measures only the dtypes listed in bench_matmul
      break;
  }
  return bytes;
}

void bench_matmul(kernels::CpuBackend& cpu, double min_seconds, const Options& options) {
  std::mt19937 rng(1);
  struct Shape { int64_t out, in; const char* what; };
  const Shape shapes[] = {{151936, 1024, "lm_head"}, {3072, 1024, "ffn up/gate"}, {1024, 3072, "ffn down"},
                          {2048, 1024, "q proj"}};
  const std::vector<DType>& dtypes = options.dtypes;
  const char* family = cpu.kernels().name;
  // Decode streams every weight from DRAM once per token: rotate through copies of the matrix
  // totalling > 512 MiB so no call finds its weights in the caches.
  if (options.runs("gemv"))
    std::printf("[%s] gemv, 1 token (%d threads), weights streamed from DRAM:\n", family, cpu.pool().num_threads());
  for (const Shape& shape : shapes) {
    if (!options.runs("gemv")) break;
    for (DType dtype : dtypes) {
      if (dtype == DType::F32 && shape.out > 100000) continue;
      const std::vector<uint8_t> one = random_weights(dtype, shape.out, shape.in, rng);
      const size_t num_copies = std::max<size_t>(1, (size_t(512) << 20) / one.size() + 1);
      std::vector<uint8_t> copies(one.size() * num_copies);
      for (size_t c = 0; c < num_copies; ++c) std::memcpy(copies.data() + c * one.size(), one.data(), one.size());
      std::vector<float> x(static_cast<size_t>(shape.in), 0.5f), y(static_cast<size_t>(shape.out));
      size_t next = 0;
      const double seconds = Timer::best_of(min_seconds, [&] {
        const Tensor w{"w", dtype, {shape.out, shape.in}, copies.data() + (next++ % num_copies) * one.size()};
        cpu.matmul(w, x.data(), y.data(), 1);
      });
      std::printf("  [%s] %-12s %6ld x %-5ld %-5s %8.1f us  %6.1f GB/s\n", family, shape.what, long(shape.out),
                  long(shape.in), std::string(dtype_name(dtype)).c_str(), seconds * 1e6,
                  double(one.size()) / seconds / 1e9);
    }
  }
  if (options.runs("prefill")) std::printf("[%s] prefill matmul, 512 tokens:\n", family);
  const int64_t num_tokens = 512;
  for (const Shape& shape : {shapes[1], shapes[2], shapes[3]}) {
    if (!options.runs("prefill")) break;
    for (DType dtype : dtypes) {
      std::vector<uint8_t> bytes = random_weights(dtype, shape.out, shape.in, rng);
      Tensor w{"w", dtype, {shape.out, shape.in}, bytes.data()};
      std::vector<float> x(size_t(num_tokens * shape.in), 0.25f), y(size_t(num_tokens * shape.out));
      const double seconds =
          Timer::best_of(min_seconds, [&] { cpu.matmul(w, x.data(), y.data(), num_tokens); });
      const double flops = 2.0 * double(shape.out) * double(shape.in) * double(num_tokens);
      std::printf("  [%s] %-12s %6ld x %-5ld %-5s %8.2f ms  %6.1f GFLOP/s\n", family, shape.what, long(shape.out),
                  long(shape.in), std::string(dtype_name(dtype)).c_str(), seconds * 1e3, flops / seconds / 1e9);
    }
  }
  if (!options.runs("small")) return;
  // Where the streaming (decode) path hands over to the packed (prefill) one: tokens around the
  // switch, weights in cache.
  for (DType dtype : dtypes) {
    if (dtype == DType::F32) continue;
    std::printf("[%s] small-batch matmul (3072 x 1024 %s, weights in cache):\n", family,
                std::string(dtype_name(dtype)).c_str());
    std::vector<uint8_t> bytes = random_weights(dtype, 3072, 1024, rng);
    Tensor w{"w", dtype, {3072, 1024}, bytes.data()};
    for (int64_t t : {1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192}) {
      std::vector<float> x(size_t(t * 1024), 0.25f), y(size_t(t * 3072));
      const double seconds = Timer::best_of(min_seconds, [&] { cpu.matmul(w, x.data(), y.data(), t); });
      std::printf("  [%s] %-5s tokens %3ld  %8.1f us  %6.1f GFLOP/s\n", family, std::string(dtype_name(dtype)).c_str(),
                  long(t), seconds * 1e6, 2.0 * 3072 * 1024 * double(t) / seconds / 1e9);
    }
  }
}

void bench_attention(kernels::CpuBackend& cpu, double min_seconds) {
  const int64_t num_heads = 16, num_kv_heads = 8, head_dim = 128, block_size = 16;
  const int64_t context = 4096, num_blocks = context / block_size;
  for (DType dtype : {DType::F32, DType::F16}) {
  const size_t num_values = size_t(num_blocks * block_size * num_kv_heads * head_dim);
  std::vector<uint8_t> k(num_values * dtype_block_bytes(dtype)), v(k.size());
  const uint16_t k_half = f32_to_f16(0.01f), v_half = f32_to_f16(0.02f);
  const float k_float = 0.01f, v_float = 0.02f;
  for (size_t i = 0; i < num_values; ++i) {
    if (dtype == DType::F16) {
      std::memcpy(&k[2 * i], &k_half, 2), std::memcpy(&v[2 * i], &v_half, 2);
    } else {
      std::memcpy(&k[4 * i], &k_float, 4), std::memcpy(&v[4 * i], &v_float, 4);
    }
  }
  kernels::KvLayerView kv{k.data(), v.data(), block_size, num_kv_heads, head_dim, dtype};
  std::vector<int32_t> table(static_cast<size_t>(num_blocks));
  std::iota(table.begin(), table.end(), 0);
  std::shuffle(table.begin(), table.end(), std::mt19937(3));
  const int32_t* tables[] = {table.data()};
  for (int64_t num_tokens : {int64_t(512), int64_t(1)}) {
    std::vector<int32_t> positions(static_cast<size_t>(num_tokens)), seq(static_cast<size_t>(num_tokens), 0);
    for (int64_t t = 0; t < num_tokens; ++t) positions[size_t(t)] = int32_t(num_tokens == 1 ? context - 1 : t);
    std::vector<float> q(size_t(num_tokens * num_heads * head_dim), 0.1f), out(q.size());
    kernels::AttentionBatch batch{num_tokens, positions.data(), seq.data(), tables};
    const double seconds = Timer::best_of(
        min_seconds, [&] { cpu.paged_attention(q.data(), out.data(), batch, kv, num_heads, 0.088f, nullptr); });
    std::printf("[%s] paged attention %s (16 q heads, 8 kv heads, head_dim 128, %s KV): %.3f ms per layer",
                cpu.kernels().name, num_tokens == 1 ? "decode, 1 token at context 4096" : "prefill, 512 tokens",
                std::string(dtype_name(dtype)).c_str(), seconds * 1e3);
    if (num_tokens == 1) std::printf(", %.1f GB/s of KV", 2.0 * double(k.size()) / seconds / 1e9);  // decode reads all
    std::printf("\n");
  }
  {  // a decode that reads only its last 1024 positions
    kernels::KvLayerView windowed = kv;
    windowed.window = 1024;
    const int32_t position = int32_t(context - 1), seq = 0;
    std::vector<float> q(size_t(num_heads * head_dim), 0.1f), out(q.size());
    kernels::AttentionBatch batch{1, &position, &seq, tables};
    const double seconds = Timer::best_of(
        min_seconds, [&] { cpu.paged_attention(q.data(), out.data(), batch, windowed, num_heads, 0.088f, nullptr); });
    std::printf("[%s] paged attention decode, 1 token at context 4096, window 1024 (%s KV): %.3f ms per layer\n",
                cpu.kernels().name, std::string(dtype_name(dtype)).c_str(), seconds * 1e3);
  }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> positional;
  Options options;
  std::vector<const kernels::CpuKernels*> families;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value_of = [&](std::string_view flag) { return arg.substr(flag.size()); };
    if (arg.starts_with("--dtypes=")) {
      options.dtypes.clear();
      for (const std::string& name : split_commas(value_of("--dtypes="))) {
        DType dtype;
        if (!parse_dtype(name, &dtype)) {
          std::fprintf(stderr, "unknown dtype %s\n", name.c_str());
          return 2;
        }
        options.dtypes.push_back(dtype);
      }
    } else if (arg.starts_with("--only=")) {
      options.sections = split_commas(value_of("--only="));
    } else if (arg.starts_with("--kernels=")) {
      std::vector<std::string> names = split_commas(value_of("--kernels="));
      if (names == std::vector<std::string>{"all"}) names = {"avx512", "avx2", "ref"};
      for (const std::string& name : names) {
        const bool runnable = name == "ref" || (name == "avx2" && kernels::cpu::has_avx2_kernels()) ||
                              (name == "avx512" && kernels::cpu::has_avx512_kernels());
        if (!runnable) {
          std::fprintf(stderr, "skipping kernels %s: unknown, or this CPU cannot run them\n", name.c_str());
          continue;
        }
        families.push_back(kernels::choose_cpu_kernels(name.c_str(), kernels::cpu::has_avx512_kernels(),
                                                       kernels::cpu::has_avx2_kernels())
                               .kernels);
      }
    } else {
      positional.push_back(arg);
    }
  }
  const int num_threads = positional.size() > 0 ? std::atoi(std::string(positional[0]).c_str()) : 0;
  const double min_seconds = positional.size() > 1 ? std::atof(std::string(positional[1]).c_str()) : 0.3;
  if (families.empty()) families.push_back(&kernels::best_cpu_kernels());
  ThreadPool pool(num_threads);
  g_use_cpu_time = pool.num_threads() == 1;
  std::printf("dispatched kernels: %s, timing: %s\n", kernels::backend_name(),
              g_use_cpu_time ? "thread CPU time" : "wall clock");
  for (const kernels::CpuKernels* family : families) {
    kernels::CpuBackend cpu(pool, *family);  // the ops as the model calls them
    bench_matmul(cpu, min_seconds, options);
    if (options.runs("attention")) bench_attention(cpu, min_seconds);
  }
  return 0;
}
