// Row gathers and scatters: embedding lookup, picking the rows that need
// logits, and the mixture-of-experts' gather / weighted scatter-add.
#include <algorithm>
#include <cstring>

#include "kernels/ref/ref_ops.h"

namespace llmesh::kernels::ref {

void gather_rows(const Tensor& table, const int32_t* row_ids, int64_t num_rows, float* out) {
  const int64_t dim = table.cols();
  for (int64_t i = 0; i < num_rows; ++i) dequantize_row(table.dtype, table.row(row_ids[i]), out + i * dim, dim);
}

void copy_rows(const float* src, int64_t dim, const int32_t* row_ids, int64_t num_rows, float* dst) {
  for (int64_t i = 0; i < num_rows; ++i)
    std::memcpy(dst + i * dim, src + int64_t(row_ids[i]) * dim, sizeof(float) * size_t(dim));
}

void scatter_add_rows(const float* src, int64_t dim, const int32_t* row_ids, const float* scales,
                      int64_t num_rows, float* dst) {
  for (int64_t i = 0; i < num_rows; ++i) {
    float* d = dst + int64_t(row_ids[i]) * dim;
    const float* s = src + i * dim;
    const float w = scales[i];
    for (int64_t j = 0; j < dim; ++j) d[j] += w * s[j];
  }
}

void copy_columns(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int64_t num_rows,
                  int64_t width) {
  for (int64_t r = 0; r < num_rows; ++r)
    std::memcpy(dst + r * dst_stride, src + r * src_stride, sizeof(float) * size_t(width));
}

void fill(float* x, float value, int64_t n) { std::fill(x, x + n, value); }

}  // namespace llmesh::kernels::ref
