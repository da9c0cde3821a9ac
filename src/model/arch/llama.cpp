// Dense decoder families that share Llama's block structure:
//   llama — Llama 3.x (RoPE with optional llama3 frequency scaling)
//   qwen2 — Qwen2 / Qwen2.5 (q/k/v biases)
//   qwen3 — Qwen3 dense (per-head q/k RMSNorm, explicit head_dim)
// The differences are options in ModelConfig that the shared blocks honour.
#include "model/arch/architectures.h"
#include "model/decoder.h"
#include "model/model_files.h"

namespace llmesh::model {

std::unique_ptr<Model> create_llama_family(const ModelFiles& files, std::shared_ptr<kernels::Backend> backend,
                                           const ModelShard& shard) {
  const ModelConfig& config = files.config;
  auto model = std::make_unique<DecoderModel>(config, files.weights, std::move(backend), shard);
  for (int64_t i = shard.layer_begin; i < shard.end_layer(config.num_layers); ++i) {
    auto ffn = std::make_unique<DenseFfn>(files.weights, "blk." + std::to_string(i) + ".ffn_{}",
                                          config.hidden_size, config.intermediate_size, shard);
    model->add_layer(model->make_layer(files.weights, i, std::move(ffn)));
  }
  return model;
}

}  // namespace llmesh::model
