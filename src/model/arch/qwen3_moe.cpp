// Qwen3-MoE: Qwen3's attention (q/k norm) with a mixture-of-experts FFN in every layer.
#include "core/error.h"
#include "model/arch/architectures.h"
#include "model/decoder.h"
#include "model/model_files.h"

namespace llmesh::model {

std::unique_ptr<Model> create_qwen3_moe(const ModelFiles& files, std::shared_ptr<kernels::Backend> backend,
                                        const ModelShard& shard) {
  const ModelConfig& config = files.config;
  check(config.is_moe() && config.num_experts_per_token > 0 &&
            config.num_experts_per_token <= config.num_experts,
        "qwen3moe needs 0 < experts per token ({}) <= experts ({})", config.num_experts_per_token,
        config.num_experts);
  auto model = std::make_unique<DecoderModel>(config, files.weights, std::move(backend), shard);
  for (int64_t i = shard.layer_begin; i < shard.end_layer(config.num_layers); ++i) {
    auto ffn = std::make_unique<MoeFfn>(model->config(), files.weights, i, shard);
    model->add_layer(model->make_layer(files.weights, i, std::move(ffn)));
  }
  return model;
}

}  // namespace llmesh::model
