// Reference matmul: dequantize a weight row, then one double-precision dot product per token.
#include <vector>

#include "core/error.h"
#include "kernels/ref/ref_ops.h"

namespace llmesh::kernels::ref {

void matmul(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool) {
  check(w.num_dims() == 2, "matmul: weight {} must be 2-D, got {}", w.name, w.shape_string());
  const int64_t num_out = w.shape[0], num_in = w.shape[1];
  pool.parallel_for(num_out, 16, [&](int64_t row_begin, int64_t row_end) {
    std::vector<float> w_row(static_cast<size_t>(num_in));  // [in]
    for (int64_t o = row_begin; o < row_end; ++o) {
      dequantize_row(w.dtype, w.row(o), w_row.data(), num_in);
      for (int64_t t = 0; t < num_tokens; ++t) {
        const float* x_row = x + t * num_in;
        double sum = 0.0;
        for (int64_t i = 0; i < num_in; ++i) sum += double(w_row[size_t(i)]) * double(x_row[i]);
        y[t * num_out + o] = float(sum);
      }
    }
  });
}

}  // namespace llmesh::kernels::ref
