#include "model/blocks/linear.h"

#include <cstring>
#include <new>

#include "core/error.h"
#include "kernels/ops.h"
#include "model/weight_store.h"

namespace llmesh::model {

std::vector<float> to_f32_vector(const Tensor& t) {
  std::vector<float> out(size_t(t.num_elements()));
  kernels::dequantize_row(t.dtype, t.data, out.data(), t.num_elements());
  return out;
}

void Linear::apply(kernels::Backend& backend, const float* x, float* y, int64_t num_tokens) const {
  backend.matmul(weight, x, y, num_tokens);
  if (!bias.empty()) backend.add_bias(y, bias.data(), num_tokens, out_features());
}

Linear Linear::load(const WeightStore& weights, const std::string& name, int64_t out_features,
                    int64_t in_features) {
  Linear linear;
  linear.weight = weights.get(name + ".weight");
  check(linear.weight.num_dims() == 2 && linear.weight.rows() == out_features &&
            linear.weight.cols() == in_features,
        "tensor {}.weight has shape {}, expected [{}, {}]", name, linear.weight.shape_string(),
        out_features, in_features);
  if (const Tensor* bias = weights.find(name + ".bias")) {
    check(bias->num_elements() == out_features, "tensor {}.bias has {} values, expected {}", name,
          bias->num_elements(), out_features);
    linear.bias = to_f32_vector(*bias);
  }
  return linear;
}

namespace {

// Columns [begin, begin + n) of every row of a 2-D tensor, into a new 64-byte aligned buffer.
Tensor copy_columns(const Tensor& t, int64_t begin, int64_t n, std::shared_ptr<const uint8_t[]>& storage) {
  const size_t offset = dtype_row_bytes(t.dtype, begin), row_bytes = dtype_row_bytes(t.dtype, n);
  const size_t size = row_bytes * size_t(t.rows());
  std::shared_ptr<uint8_t[]> bytes(new (std::align_val_t(64)) uint8_t[size], [](uint8_t* p) {
    ::operator delete[](p, std::align_val_t(64));
  });
  for (int64_t r = 0; r < t.rows(); ++r) std::memcpy(bytes.get() + size_t(r) * row_bytes, t.row(r) + offset, row_bytes);
  Tensor out = t;
  out.shape.back() = n;
  out.data = bytes.get();
  storage = std::move(bytes);
  return out;
}

}  // namespace

Linear Linear::load(const WeightStore& weights, const std::string& name, int64_t out_features, int64_t in_features,
                    const LinearPart& part) {
  Linear full = load(weights, name, out_features, in_features);
  if (part.count == 1) return full;
  const bool rows = part.split == LinearSplit::Rows;
  const int64_t features = rows ? out_features : in_features;
  check(features % part.count == 0, "tensor {}.weight: {} {} do not split into {} equal parts", name, features,
        rows ? "output rows" : "input columns", part.count);
  const int64_t n = features / part.count, begin = n * part.index;
  Linear linear;
  if (rows) {
    linear.weight = full.weight.slice_rows(begin, begin + n);
    if (!full.bias.empty()) linear.bias.assign(full.bias.begin() + begin, full.bias.begin() + begin + n);
    return linear;
  }
  const int block = dtype_block_size(full.weight.dtype);
  check(n % block == 0,
        "tensor {}.weight is {}: a slice of {} input columns cuts its blocks of {}; use fewer tensor-parallel ranks",
        name, dtype_name(full.weight.dtype), n, block);
  linear.weight = copy_columns(full.weight, begin, n, linear.storage);
  if (part.index == 0) linear.bias = std::move(full.bias);
  return linear;
}

std::vector<float> load_f32_vector(const WeightStore& weights, const std::string& name, int64_t size) {
  const Tensor& t = weights.get(name);
  check(t.num_elements() == size, "tensor {} has {} values, expected {}", name, t.num_elements(), size);
  return to_f32_vector(t);
}

}  // namespace llmesh::model
