// Dispatch: picks the implementation of every op once, from the CPU's features
// and LLMESH_KERNELS (=ref forces the scalar reference).
#include "kernels/ops.h"

#include <cstdlib>
#include <string_view>

#include "core/error.h"
#include "kernels/cpu/avx512_ops.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/ref/ref_ops.h"

namespace llmesh::kernels {

namespace {

struct Backend {
  const char* name;
  decltype(&ref::matmul) matmul;
  decltype(&ref::rmsnorm) rmsnorm;
  decltype(&ref::silu_mul) silu_mul;
  decltype(&ref::softmax_inplace) softmax_inplace;
  decltype(&ref::add_inplace) add_inplace;
  decltype(&ref::rope_inplace) rope_inplace;
  decltype(&ref::paged_attention) paged_attention;
  decltype(&ref::store_kv) store_kv;
};

Backend select_backend() {
  const Backend reference{"ref", ref::matmul, ref::rmsnorm, ref::silu_mul, ref::softmax_inplace,
                          ref::add_inplace, ref::rope_inplace, ref::paged_attention, ref::store_kv};
  const char* forced = std::getenv("LLMESH_KERNELS");
  if (forced != nullptr && std::string_view(forced) == "ref") return reference;
  if (!cpu::has_avx512_kernels()) return reference;
  return Backend{"avx512", avx512::matmul, avx512::rmsnorm, avx512::silu_mul, avx512::softmax_inplace,
                 avx512::add_inplace, ref::rope_inplace, avx512::paged_attention, ref::store_kv};
}

const Backend& backend() {
  static const Backend chosen = select_backend();
  return chosen;
}

}  // namespace

const char* backend_name() { return backend().name; }

void matmul(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool) {
  check(w.num_dims() == 2, "matmul: weight {} must be 2-D, got {}", w.name, w.shape_string());
  check(w.device == Device::Cpu, "matmul: weight {} is not in CPU memory", w.name);
  if (num_tokens <= 0 || w.shape[0] == 0) return;
  backend().matmul(w, x, y, num_tokens, pool);
}

void dequantize_row(DType dtype, const void* src, float* dst, int64_t n) { ref::dequantize_row(dtype, src, dst, n); }
void quantize_row_q8_0(const float* src, BlockQ8_0* dst, int64_t n) { ref::quantize_row_q8_0(src, dst, n); }
void quantize_row_q4_0(const float* src, BlockQ4_0* dst, int64_t n) { ref::quantize_row_q4_0(src, dst, n); }

void rmsnorm(const float* x, const float* weight, float* y, int64_t num_rows, int64_t dim, float eps) {
  backend().rmsnorm(x, weight, y, num_rows, dim, eps);
}
void silu_mul(const float* gate, const float* up, float* out, int64_t n) { backend().silu_mul(gate, up, out, n); }
void softmax_inplace(float* x, int64_t n) { backend().softmax_inplace(x, n); }
void add_inplace(float* y, const float* x, int64_t n) { backend().add_inplace(y, x, n); }

void rope_inplace(float* x, int64_t num_tokens, int64_t num_heads, int64_t head_dim, const int32_t* positions,
                  const float* inv_freq, bool interleaved) {
  backend().rope_inplace(x, num_tokens, num_heads, head_dim, positions, inv_freq, interleaved);
}

void paged_attention(const float* q, float* out, const AttentionBatch& batch, const KvLayerView& kv,
                     int64_t num_heads, float scale, ThreadPool& pool) {
  check(kv.num_kv_heads > 0 && num_heads % kv.num_kv_heads == 0,
        "paged_attention: {} query heads is not a multiple of {} kv heads", num_heads, kv.num_kv_heads);
  check(kv.block_size > 0 && kv.head_dim > 0, "paged_attention: bad kv layout (block_size {}, head_dim {})",
        kv.block_size, kv.head_dim);
  if (batch.num_tokens <= 0) return;
  backend().paged_attention(q, out, batch, kv, num_heads, scale, pool);
}

void store_kv(const float* k_new, const float* v_new, const int64_t* slot_mapping, int64_t num_tokens,
              const KvLayerView& kv) {
  backend().store_kv(k_new, v_new, slot_mapping, num_tokens, kv);
}

}  // namespace llmesh::kernels
