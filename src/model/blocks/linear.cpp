#include "model/blocks/linear.h"

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

std::vector<float> load_f32_vector(const WeightStore& weights, const std::string& name, int64_t size) {
  const Tensor& t = weights.get(name);
  check(t.num_elements() == size, "tensor {} has {} values, expected {}", name, t.num_elements(), size);
  return to_f32_vector(t);
}

}  // namespace llmesh::model
