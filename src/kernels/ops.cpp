// Host conversions and the name of the CPU kernel family in use.
#include "kernels/ops.h"

#include "kernels/cpu/cpu_backend.h"
#include "kernels/ref/ref_ops.h"

namespace llmesh::kernels {

const char* backend_name() { return best_cpu_kernels().name; }

void dequantize_row(DType dtype, const void* src, float* dst, int64_t n) { ref::dequantize_row(dtype, src, dst, n); }
void quantize_row_q8_0(const float* src, BlockQ8_0* dst, int64_t n) { ref::quantize_row_q8_0(src, dst, n); }
void quantize_row_q4_0(const float* src, BlockQ4_0* dst, int64_t n) { ref::quantize_row_q4_0(src, dst, n); }
void quantize_row_q8_k(const float* src, BlockQ8_K* dst, int64_t n) { ref::quantize_row_q8_k(src, dst, n); }

bool is_kv_dtype(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::Q8_0;
}

}  // namespace llmesh::kernels
