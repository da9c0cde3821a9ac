#include "runtime/model_summary.h"

namespace llmesh::runtime {

namespace {

// The layer of a file tensor ("model.layers.N." or "blk.N."), or -1.
int64_t layer_of(const std::string& name) {
  for (const char* prefix : {"model.layers.", "blk."}) {
    const std::string p(prefix);
    if (name.rfind(p, 0) != 0) continue;
    int64_t layer = -1;
    for (size_t i = p.size(); i < name.size() && name[i] >= '0' && name[i] <= '9' && layer < (int64_t(1) << 40); ++i) {
      layer = (layer < 0 ? 0 : layer * 10) + (name[i] - '0');
    }
    return layer;
  }
  return -1;
}

}  // namespace

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
  // layers past num_layers (multi-token prediction, GLM-4.5) are in the file but never run
  for (const Tensor& t : files.weights.file_tensors()) {
    if (layer_of(t.name) >= c.num_layers) s.num_active_parameters -= t.num_elements();
  }
  if (c.is_moe()) {
    const int64_t per_expert = 3 * c.hidden_size * c.moe_intermediate_size;  // one SwiGLU expert in one layer
    // the idle routed experts of every MoE layer (the shared experts and leading dense layers all run)
    s.num_active_parameters -=
        (c.num_experts - c.num_experts_per_token) * per_expert * (c.num_layers - c.first_dense_layers);
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
