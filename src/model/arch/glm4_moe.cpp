// GLM-4.5 / 4.6 / 4.7 (Glm4MoeForCausalLM, GGUF glm4moe):
//   attention: GQA with q/k/v biases, optional per-head q/k RMSNorm, explicit head_dim, and
//              partial rotary (NeoX pairs over the first head_dim * partial_rotary_factor dims);
//   FFN:       a dense SwiGLU in the first first_k_dense_replace layers, then a mixture of
//              experts with a sigmoid router (score-correction bias, group-limited top-k,
//              routed scaling) plus shared experts.
// The multi-token-prediction layers past num_hidden_layers are not loaded.
#include "core/error.h"
#include "model/arch/architectures.h"
#include "model/decoder.h"
#include "model/model_files.h"

namespace llmesh::model {

std::unique_ptr<Model> create_glm4_moe(const ModelFiles& files, std::shared_ptr<kernels::Backend> backend,
                                       const ModelShard& shard) {
  const ModelConfig& config = files.config;
  check(config.is_moe() && config.router_gating == RouterGating::Sigmoid,
        "glm4moe needs a mixture of experts with a sigmoid router");
  auto model = std::make_unique<DecoderModel>(config, files.weights, std::move(backend), shard);
  for (int64_t i = shard.layer_begin; i < shard.end_layer(config.num_layers); ++i)
    model->add_layer(model->make_layer(files.weights, i, model->make_ffn(files.weights, i)));
  return model;
}

}  // namespace llmesh::model
