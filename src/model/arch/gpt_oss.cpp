// gpt-oss (GptOssForCausalLM, GGUF gpt-oss):
//   attention: GQA with q/k/v/o biases and a learned sink logit per head, windowed (128) on
//              the even layers and full on the odd ones, NeoX RoPE with YaRN;
//   FFN:       a mixture of experts in every layer: a router with a bias, the top-k logits
//              softmaxed (the same as a softmax over all, renormalized over the top k), experts
//              with biases and the clamped SwiGLU (ModelConfig::swiglu_limit).
#include "core/error.h"
#include "model/arch/architectures.h"
#include "model/decoder.h"
#include "model/model_files.h"

namespace llmesh::model {

std::unique_ptr<Model> create_gpt_oss(const ModelFiles& files, std::shared_ptr<kernels::Backend> backend,
                                      const ModelShard& shard) {
  const ModelConfig& config = files.config;
  check(config.is_moe() && config.router_gating == RouterGating::Softmax && config.norm_topk_prob &&
            config.first_dense_layers == 0 && config.num_shared_experts == 0,
        "gpt-oss needs a mixture of experts in every layer, routed by a softmax over the top k");
  check(config.attention_sinks && config.swiglu_limit > 0, "gpt-oss needs attention sinks and a swiglu_limit");
  auto model = std::make_unique<DecoderModel>(config, files.weights, std::move(backend), shard);
  for (int64_t i = shard.layer_begin; i < shard.end_layer(config.num_layers); ++i)
    model->add_layer(model->make_layer(files.weights, i, model->make_ffn(files.weights, i)));
  return model;
}

}  // namespace llmesh::model
