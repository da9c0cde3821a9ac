// DeepSeek V2 / V3 and Kimi K2 (DeepseekV2ForCausalLM, DeepseekV3ForCausalLM, GGUF deepseek2):
//   attention: multi-head latent attention (blocks/mla_attention.h) with the latent in the KV
//              cache, decoupled interleaved RoPE on qk_rope_head_dim dims, YaRN with mscale_all_dim;
//   FFN:       a dense SwiGLU in the first first_k_dense_replace layers, then a mixture of experts
//              with shared experts: V3 / Kimi route by sigmoid scores with the score-correction bias
//              and group-limited top-k (as GLM-4.5), V2 by softmax.
// The multi-token-prediction layers past num_hidden_layers are not loaded.
#include "model/arch/architectures.h"
#include "model/blocks/mla_attention.h"
#include "model/decoder.h"
#include "model/model_files.h"

namespace llmesh::model {

std::unique_ptr<Model> create_deepseek2(const ModelFiles& files, std::shared_ptr<kernels::Backend> backend,
                                        const ModelShard& shard) {
  const ModelConfig& config = files.config;
  auto model = std::make_unique<DecoderModel>(config, files.weights, std::move(backend), shard);
  for (int64_t i = shard.layer_begin; i < shard.end_layer(config.num_layers); ++i) {
    auto attention = std::make_unique<MlaAttention>(model->config(), files.weights, i, model->inv_freq(), shard);
    model->add_layer(model->make_layer(files.weights, i, model->make_ffn(files.weights, i), std::move(attention)));
  }
  return model;
}

}  // namespace llmesh::model
