// The CPU backend: host memory, and the kernels of kernels/ref/ or kernels/cpu/
// (AVX-512 or AVX2) picked once per process from the CPU's features.
//
//   ThreadPool pool(0);
//   kernels::CpuBackend cpu(pool);                 // best kernels (LLMESH_KERNELS overrides: see choose_cpu_kernels)
//   cpu.matmul(w, x, y, num_tokens);               // parallel over output rows on `pool`
//   kernels::CpuBackend ref(pool, kernels::reference_cpu_kernels());  // the scalar reference, e.g. in tests
//
// Parallel ops (matmul, paged_attention) run on the backend's thread pool,
// one at a time: two threads calling ops at once (two micro-batches) take
// turns op by op; the other ops run on the calling thread.
#pragma once

#include <mutex>
#include <string>

#include "core/thread_pool.h"
#include "kernels/backend.h"
#include "kernels/ref/ref_ops.h"

namespace llmesh::kernels {

// One CPU kernel family: the reference, or the AVX-512 or AVX2 fast paths (which
// fall back to the reference for shapes and dtypes they do not handle).
struct CpuKernels {
  const char* name;  // "avx512", "avx2" or "ref"
  decltype(&ref::matmul) matmul;
  decltype(&ref::rmsnorm) rmsnorm;
  decltype(&ref::silu_mul) silu_mul;
  decltype(&ref::softmax_inplace) softmax_inplace;  // one row
  decltype(&ref::add_inplace) add_inplace;
  decltype(&ref::rope_inplace) rope_inplace;
  decltype(&ref::paged_attention) paged_attention;
  decltype(&ref::store_kv) store_kv;
};

// The family for LLMESH_KERNELS=`requested` (nullptr or "" when unset) on a CPU with these features:
//   unset   the best the CPU runs: avx512 (cpu::has_avx512_kernels), else avx2 (has_avx2_kernels), else ref
//   ref     the scalar reference
//   avx2    AVX2 even where AVX-512 is available (comparisons, debugging)
//   avx512  AVX-512
// A request the CPU cannot run, or an unknown name, gets the best family and a one-line
// explanation in `warning` (empty otherwise).
struct CpuKernelsChoice {
  const CpuKernels* kernels;
  std::string warning;
};
CpuKernelsChoice choose_cpu_kernels(const char* requested, bool has_avx512, bool has_avx2);

// choose_cpu_kernels(LLMESH_KERNELS, this CPU), chosen once per process; a warning goes to stderr then.
const CpuKernels& best_cpu_kernels();
const CpuKernels& reference_cpu_kernels();

class CpuBackend final : public Backend {
 public:
  // `pool` must outlive the backend.
  explicit CpuBackend(ThreadPool& pool, const CpuKernels& kernels = best_cpu_kernels());

  const char* name() const override { return name_; }
  Device device() const override { return Device::Cpu; }
  // Matmul and GatherRows: every DType (each has a dequantizer); the other ops: F32.
  bool supports(Op op, DType dtype) const override;
  Buffer allocate(size_t num_bytes) override;

  const CpuKernels& kernels() const { return kernels_; }
  ThreadPool& pool() const { return pool_; }

  void matmul(const Tensor& w, const float* x, float* y, int64_t num_tokens) override;
  void gather_rows(const Tensor& table, const int32_t* row_ids, int64_t num_rows, float* out) override;
  void copy_rows(const float* src, int64_t dim, const int32_t* row_ids, int64_t num_rows, float* dst) override;
  void copy_columns(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int64_t num_rows,
                    int64_t width) override;
  void scatter_add_rows(const float* src, int64_t dim, const int32_t* row_ids, const float* scales,
                        int64_t num_rows, float* dst) override;
  void fill(float* x, float value, int64_t n) override;
  void rmsnorm(const float* x, const float* weight, float* y, int64_t num_rows, int64_t dim, float eps) override;
  void silu_mul(const float* gate, const float* up, float* out, int64_t n) override;
  void clamped_swiglu(const float* gate, const float* up, float* out, int64_t n, float alpha, float limit) override;
  void softmax_inplace(float* x, int64_t num_rows, int64_t dim) override;
  void add_inplace(float* y, const float* x, int64_t n) override;
  void add_bias(float* y, const float* bias, int64_t num_rows, int64_t dim) override;
  void rope_inplace(float* x, int64_t num_tokens, int64_t num_heads, int64_t head_dim, int64_t rotary_dim,
                    const int32_t* positions, const float* inv_freq, bool interleaved) override;
  void paged_attention(const float* q, float* out, const AttentionBatch& batch, const KvLayerView& kv,
                       int64_t num_heads, float scale, const float* sinks) override;
  void store_kv(const float* k_new, const float* v_new, const int64_t* slot_mapping, int64_t num_tokens,
                const KvLayerView& kv) override;

 protected:
  void deallocate(void* data, size_t num_bytes) noexcept override;

 private:
  ThreadPool& pool_;
  const CpuKernels& kernels_;
  const char* name_;       // "cpu/" + kernels_.name
  std::mutex pool_mutex_;  // held while an op runs on pool_ (ThreadPool::run is not reentrant)
};

}  // namespace llmesh::kernels
