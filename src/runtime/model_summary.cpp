#include "runtime/model_summary.h"

namespace llmesh::runtime {

ModelSummary summarize(const model::ModelFiles& files) {
  const model::ModelConfig& c = files.config;
  ModelSummary s;
  for (const Tensor& t : files.weights.file_tensors()) {
    s.num_parameters += t.num_elements();
    s.weight_bytes += int64_t(t.num_bytes());
    DTypeShare& share = s.by_dtype[std::string(dtype_name(t.dtype))];
    share.num_tensors += 1;
    share.num_bytes += int64_t(t.num_bytes());
  }
  s.num_active_parameters = s.num_parameters;
  if (c.is_moe()) {
    const int64_t per_expert = 3 * c.hidden_size * c.moe_intermediate_size;  // one SwiGLU expert in one layer
    s.num_active_parameters -= (c.num_experts - c.num_experts_per_token) * per_expert * c.num_layers;
  }
  int64_t most = -1;
  for (const auto& [name, share] : s.by_dtype) {
    if (share.num_bytes > most) {
      most = share.num_bytes;
      s.quantization = name;
    }
  }
  return s;
}

}  // namespace llmesh::runtime
