// The CPU backend: picks the kernel family once (CPU features, LLMESH_KERNELS)
// and forwards each op to it.
#include "kernels/cpu/cpu_backend.h"

#include <cstdlib>
#include <new>
#include <string_view>

#include "core/error.h"
#include "core/log.h"
#include "kernels/cpu/avx2_ops.h"
#include "kernels/cpu/avx512_ops.h"
#include "kernels/cpu/cpu_features.h"

namespace llmesh::kernels {

namespace {

const CpuKernels kReference{"ref",           ref::matmul,       ref::rmsnorm,         ref::silu_mul,
                            ref::softmax_inplace, ref::add_inplace, ref::rope_inplace, ref::paged_attention,
                            ref::store_kv};
const CpuKernels kAvx512{"avx512",          avx512::matmul,    avx512::rmsnorm,     avx512::silu_mul,
                         avx512::softmax_inplace, avx512::add_inplace, ref::rope_inplace, avx512::paged_attention,
                         ref::store_kv};
const CpuKernels kAvx2{"avx2",          avx2::matmul,    avx2::rmsnorm,      avx2::silu_mul,
                       avx2::softmax_inplace, avx2::add_inplace, avx2::rope_inplace, avx2::paged_attention,
                       ref::store_kv};

// "cpu/" + the family's name, as a static string (Backend::name returns a const char*).
const char* backend_name_for(const CpuKernels& kernels) {
  const std::string_view name = kernels.name;
  return name == "avx512" ? "cpu/avx512" : name == "avx2" ? "cpu/avx2" : "cpu/ref";
}

}  // namespace

CpuKernelsChoice choose_cpu_kernels(const char* requested, bool has_avx512, bool has_avx2) {
  const CpuKernels* best = has_avx512 ? &kAvx512 : has_avx2 ? &kAvx2 : &kReference;
  const std::string_view name = requested != nullptr ? requested : "";
  if (name.empty()) return {best, ""};
  if (name == "ref") return {&kReference, ""};
  if (name == "avx512" && has_avx512) return {&kAvx512, ""};
  if (name == "avx2" && has_avx2) return {&kAvx2, ""};
  const bool known = name == "avx512" || name == "avx2";
  return {best, fmt::format("LLMESH_KERNELS={}: {}; using the {} kernels instead", name,
                            known ? "this CPU cannot run these kernels" : "unknown kernel family (ref, avx2, avx512)",
                            best->name)};
}

const CpuKernels& best_cpu_kernels() {
  static const CpuKernels& chosen = []() -> const CpuKernels& {
    const CpuKernelsChoice choice =
        choose_cpu_kernels(std::getenv("LLMESH_KERNELS"), cpu::has_avx512_kernels(), cpu::has_avx2_kernels());
    if (!choice.warning.empty()) log_warn("{}", choice.warning);
    return *choice.kernels;
  }();
  return chosen;
}

const CpuKernels& reference_cpu_kernels() { return kReference; }

CpuBackend::CpuBackend(ThreadPool& pool, const CpuKernels& kernels)
    : pool_(pool), kernels_(kernels), name_(backend_name_for(kernels)) {}

bool CpuBackend::supports(Op op, DType dtype) const {
  switch (op) {
    case Op::Matmul:
    case Op::GatherRows:
      return true;  // every dtype has a scalar dequantizer, so the reference runs any the fast paths lack
    case Op::PagedAttention:
    case Op::StoreKv:
      return is_kv_dtype(dtype);
    default:
      return dtype == DType::F32;
  }
}

Buffer CpuBackend::allocate(size_t num_bytes) {
  if (num_bytes == 0) return Buffer();
  void* data = ::operator new(num_bytes, std::align_val_t(kBufferAlignment));
  return Buffer(this, data, num_bytes);
}

void CpuBackend::deallocate(void* data, size_t) noexcept { ::operator delete(data, std::align_val_t(kBufferAlignment)); }

void CpuBackend::matmul(const Tensor& w, const float* x, float* y, int64_t num_tokens) {
  check(w.num_dims() == 2, "matmul: weight {} must be 2-D, got {}", w.name, w.shape_string());
  check(w.device == Device::Cpu, "matmul: weight {} is not in CPU memory", w.name);
  if (num_tokens <= 0 || w.shape[0] == 0) return;
  std::lock_guard<std::mutex> lock(pool_mutex_);
  kernels_.matmul(w, x, y, num_tokens, pool_);
}

void CpuBackend::gather_rows(const Tensor& table, const int32_t* row_ids, int64_t num_rows, float* out) {
  check(table.num_dims() == 2, "gather_rows: table {} must be 2-D, got {}", table.name, table.shape_string());
  check(table.device == Device::Cpu, "gather_rows: table {} is not in CPU memory", table.name);
  ref::gather_rows(table, row_ids, num_rows, out);
}

void CpuBackend::copy_rows(const float* src, int64_t dim, const int32_t* row_ids, int64_t num_rows, float* dst) {
  ref::copy_rows(src, dim, row_ids, num_rows, dst);
}

void CpuBackend::copy_columns(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int64_t num_rows,
                              int64_t width) {
  check(width >= 0 && width <= src_stride && width <= dst_stride,
        "copy_columns: {} columns do not fit rows of {} and {}", width, src_stride, dst_stride);
  ref::copy_columns(src, src_stride, dst, dst_stride, num_rows, width);
}

void CpuBackend::scatter_add_rows(const float* src, int64_t dim, const int32_t* row_ids, const float* scales,
                                  int64_t num_rows, float* dst) {
  ref::scatter_add_rows(src, dim, row_ids, scales, num_rows, dst);
}

void CpuBackend::fill(float* x, float value, int64_t n) { ref::fill(x, value, n); }

void CpuBackend::rmsnorm(const float* x, const float* weight, float* y, int64_t num_rows, int64_t dim, float eps) {
  kernels_.rmsnorm(x, weight, y, num_rows, dim, eps);
}

void CpuBackend::silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  kernels_.silu_mul(gate, up, out, n);
}

// Scalar in every kernel family: it runs on the experts' few intermediate values per token, next
// to matmuls that read hidden x intermediate weights each.
void CpuBackend::clamped_swiglu(const float* gate, const float* up, float* out, int64_t n, float alpha, float limit) {
  ref::clamped_swiglu(gate, up, out, n, alpha, limit);
}

void CpuBackend::softmax_inplace(float* x, int64_t num_rows, int64_t dim) {
  for (int64_t r = 0; r < num_rows; ++r) kernels_.softmax_inplace(x + r * dim, dim);
}

void CpuBackend::add_inplace(float* y, const float* x, int64_t n) { kernels_.add_inplace(y, x, n); }

void CpuBackend::add_bias(float* y, const float* bias, int64_t num_rows, int64_t dim) {
  for (int64_t r = 0; r < num_rows; ++r) kernels_.add_inplace(y + r * dim, bias, dim);
}

void CpuBackend::rope_inplace(float* x, int64_t num_tokens, int64_t num_heads, int64_t head_dim, int64_t rotary_dim,
                              const int32_t* positions, const float* inv_freq, bool interleaved) {
  kernels_.rope_inplace(x, num_tokens, num_heads, head_dim, rotary_dim, positions, inv_freq, interleaved);
}

void CpuBackend::paged_attention(const float* q, float* out, const AttentionBatch& batch, const KvLayerView& kv,
                                 int64_t num_heads, float scale, const float* sinks) {
  check(kv.num_kv_heads > 0 && num_heads % kv.num_kv_heads == 0,
        "paged_attention: {} query heads is not a multiple of {} kv heads", num_heads, kv.num_kv_heads);
  check(kv.block_size > 0 && kv.head_dim > 0, "paged_attention: bad kv layout (block_size {}, head_dim {})",
        kv.block_size, kv.head_dim);
  check(kv.v_dim() == kv.head_dim || (kv.v == kv.k && kv.v_dim() < kv.head_dim),
        "paged_attention: values of {} dims must be the start of the {}-dim K rows", kv.v_dim(), kv.head_dim);
  check(kv.window >= 0, "paged_attention: sliding window {} is negative", kv.window);
  if (batch.num_tokens <= 0) return;
  std::lock_guard<std::mutex> lock(pool_mutex_);
  kernels_.paged_attention(q, out, batch, kv, num_heads, scale, sinks, pool_);
}

void CpuBackend::store_kv(const float* k_new, const float* v_new, const int64_t* slot_mapping, int64_t num_tokens,
                          const KvLayerView& kv) {
  check((v_new == nullptr) == (kv.v == kv.k), "store_kv: values are given exactly when the pool has V rows");
  kernels_.store_kv(k_new, v_new, slot_mapping, num_tokens, kv);
}

}  // namespace llmesh::kernels
