// A decoder-only transformer assembled from shared blocks:
//   x = embed(tokens)
//   per layer: x += attention(rmsnorm(x)); x += ffn(rmsnorm(x))
//   logits = lm_head(rmsnorm(x)) for the requested tokens only
// Architectures differ in which blocks and options they plug in (model/arch/).
// A shard (model/model_shard.h) holds a layer range and a slice of each layer;
// its blocks' partial outputs are summed over the stage before the residual add.
#pragma once

#include <memory>
#include <vector>

#include "model/blocks/attention.h"
#include "model/blocks/feed_forward.h"
#include "model/model.h"

namespace llmesh::model {

class WeightStore;

struct DecoderLayer {
  std::vector<float> attn_norm;  // [hidden]
  std::unique_ptr<AttentionBlock> attention;
  std::vector<float> ffn_norm;   // [hidden]
  std::unique_ptr<FeedForward> ffn;
};

class DecoderModel : public Model {
 public:
  // Loads embeddings (first stage), final norm and output head (the rank that computes
  // logits); the architecture adds the shard's layers.
  DecoderModel(const ModelConfig& config, const WeightStore& weights, std::shared_ptr<kernels::Backend> backend,
               const ModelShard& shard = {});

  const ModelConfig& config() const override { return config_; }
  std::unique_ptr<Workspace> make_workspace(const StepShape& max_step) const override;
  void forward(const StepInput& input, kv::KvPool& kv, Workspace& ws, float* logits) const override;
  void forward_stage(const StepInput& input, kv::KvPool& kv, Workspace& ws, const float* hidden_in,
                     float* hidden_out, float* logits) const override;
  kernels::Backend& backend() const { return *backend_; }
  const ModelShard& shard() const { return shard_; }

  // Layer i's norms around the given blocks; without `attention`, grouped-query attention (this
  // shard's part) with the standard weights and options from the config.
  DecoderLayer make_layer(const WeightStore& weights, int64_t layer, std::unique_ptr<FeedForward> ffn,
                          std::unique_ptr<AttentionBlock> attention = nullptr) const;
  // Layer i's FFN as the config says (this shard's part): a mixture of experts where
  // config().is_moe_layer(i), else a dense SwiGLU of intermediate_size.
  std::unique_ptr<FeedForward> make_ffn(const WeightStore& weights, int64_t layer) const;
  // RoPE frequencies over config().rope_dim(), for the attention blocks.
  const std::vector<float>& inv_freq() const { return inv_freq_; }
  void add_layer(DecoderLayer layer) { layers_.push_back(std::move(layer)); }

 private:
  // Adds a block's output `y` to the residual stream `x`, first summing it over the stage when partial.
  void add_block_output(bool partial, float* x, float* y, int64_t n) const;

  ModelConfig config_;
  ModelShard shard_;
  std::shared_ptr<kernels::Backend> backend_;  // every kernel runs here
  ActivationDims dims_;
  Tensor token_embd_;              // {vocab, hidden}
  std::vector<float> output_norm_;  // [hidden]
  Linear lm_head_;                  // {vocab, hidden}; token_embd when tied
  std::vector<float> inv_freq_;     // [rope_dim / 2]
  std::vector<DecoderLayer> layers_;  // layers [shard_.layer_begin, layer_end)
};

}  // namespace llmesh::model
