#include "model/decoder.h"

#include <cstring>

#include "core/error.h"
#include "model/blocks/rope.h"
#include "model/weight_store.h"

namespace llmesh::model {

DecoderModel::DecoderModel(const ModelConfig& config, const WeightStore& weights,
                           std::shared_ptr<kernels::Backend> backend, const ModelShard& shard)
    : config_(config), shard_(shard), backend_(std::move(backend)), dims_(ActivationDims::of(config)) {
  check(config.head_dim % 2 == 0, "head_dim {} must be even for RoPE", config.head_dim);
  check(config.num_kv_heads > 0 && config.num_heads % config.num_kv_heads == 0,
        "num_heads {} is not a multiple of num_kv_heads {}", config.num_heads, config.num_kv_heads);
  check(0 <= shard.layer_begin && shard.layer_begin < shard.end_layer(config.num_layers) &&
            shard.end_layer(config.num_layers) <= config.num_layers,
        "layers [{}, {}) are not a range of the model's {}", shard.layer_begin, shard.end_layer(config.num_layers),
        config.num_layers);
  check(shard.tp_size >= 1 && 0 <= shard.tp_rank && shard.tp_rank < shard.tp_size &&
            config.num_heads % shard.tp_size == 0,
        "{} attention heads do not split over {} tensor-parallel ranks", config.num_heads, shard.tp_size);
  inv_freq_ = rope_inv_freq(config, weights);
  const bool embeds = shard.first_stage(), projects = shard.computes_logits(config.num_layers);
  if (!embeds && !projects) return;  // a middle stage (or a lane that leaves the logits to lane 0)
  token_embd_ = weights.get("token_embd.weight");
  check(token_embd_.num_dims() == 2 && token_embd_.rows() == config.vocab_size &&
            token_embd_.cols() == config.hidden_size,
        "token_embd.weight has shape {}, expected [{}, {}]", token_embd_.shape_string(),
        config.vocab_size, config.hidden_size);
  check(backend_->supports(kernels::Op::GatherRows, token_embd_.dtype),
        "token_embd.weight is {}, which the {} backend cannot look up", dtype_name(token_embd_.dtype),
        backend_->name());
  if (!projects) return;
  output_norm_ = load_f32_vector(weights, "output_norm.weight", config.hidden_size);
  if (weights.has("output.weight")) {
    lm_head_ = Linear::load(weights, "output", config.vocab_size, config.hidden_size);
  } else {
    lm_head_.weight = token_embd_;  // tied embeddings
  }
  if (!embeds) token_embd_ = Tensor{};
}

DecoderLayer DecoderModel::make_layer(const WeightStore& weights, int64_t layer, std::unique_ptr<FeedForward> ffn,
                                      std::unique_ptr<AttentionBlock> attention) const {
  const std::string prefix = "blk." + std::to_string(layer) + ".";
  DecoderLayer l;
  l.attn_norm = load_f32_vector(weights, prefix + "attn_norm.weight", config_.hidden_size);
  l.attention =
      attention ? std::move(attention) : std::make_unique<Attention>(config_, weights, layer, inv_freq_, shard_);
  l.ffn_norm = load_f32_vector(weights, prefix + "ffn_norm.weight", config_.hidden_size);
  l.ffn = std::move(ffn);
  return l;
}

std::unique_ptr<FeedForward> DecoderModel::make_ffn(const WeightStore& weights, int64_t layer) const {
  if (config_.is_moe_layer(layer)) return std::make_unique<MoeFfn>(config_, weights, layer, shard_);
  return std::make_unique<DenseFfn>(weights, "blk." + std::to_string(layer) + ".ffn_{}", config_.hidden_size,
                                    config_.intermediate_size, shard_);
}

std::unique_ptr<Workspace> DecoderModel::make_workspace(const StepShape& max_step) const {
  return std::make_unique<Workspace>(*backend_, dims_, max_step);
}

void DecoderModel::add_block_output(bool partial, float* x, float* y, int64_t n) const {
  if (partial) {
    check(shard_.reduce != nullptr, "a sharded block needs the stage's reduce");
    shard_.reduce->sum(y, n);
  }
  backend_->add_inplace(x, y, n);
}

void DecoderModel::forward(const StepInput& input, kv::KvPool& kv, Workspace& ws, float* logits) const {
  forward_stage(input, kv, ws, nullptr, nullptr, logits);
}

void DecoderModel::forward_stage(const StepInput& input, kv::KvPool& kv, Workspace& ws, const float* hidden_in,
                                 float* hidden_out, float* logits) const {
  const int64_t num_tokens = input.num_tokens();
  const int64_t num_logits = int64_t(input.logits_indices.size());
  const int64_t hidden = config_.hidden_size;
  kernels::Backend& be = *backend_;
  const int64_t num_layers = shard_.end_layer(config_.num_layers) - shard_.layer_begin;
  check(int64_t(layers_.size()) == num_layers, "model has {} layers loaded, its shard has {}", layers_.size(),
        num_layers);
  check(shard_.first_stage() == (hidden_in == nullptr),
        "forward_stage: hidden_in is needed exactly when the stage does not start at layer 0");
  check(shard_.last_stage(config_.num_layers) == (hidden_out == nullptr),
        "forward_stage: hidden_out is needed exactly when the stage does not end at the last layer");
  check(ws.backend() == backend_.get() && ws.dims() == dims_, "forward: the workspace was made by another model");
  ws.reserve(num_tokens, num_logits);
  const Activations& a = ws.act();  // x: residual stream, h: normed input of a block, y: its output

  for (int64_t t = 0; t < num_tokens; ++t) {
    const int32_t id = input.token_ids[size_t(t)];
    check(id >= 0 && id < config_.vocab_size, "token id {} is outside the vocabulary (size {})", id,
          config_.vocab_size);
  }
  if (hidden_in != nullptr) {
    std::memcpy(a.x, hidden_in, size_t(num_tokens * hidden) * sizeof(float));
  } else {
    be.gather_rows(token_embd_, input.token_ids.data(), num_tokens, a.x);
  }

  AttentionStep step;
  step.batch.num_tokens = num_tokens;
  step.batch.positions = input.positions.data();
  step.batch.seq_index = input.seq_index.data();
  std::vector<const int32_t*>& block_tables = ws.block_tables();  // one pointer per sequence into the CSR ids
  block_tables.resize(size_t(input.num_sequences()));
  for (int64_t s = 0; s < input.num_sequences(); ++s) block_tables[size_t(s)] = input.block_table(s).data();
  step.batch.block_tables = block_tables.data();
  step.slot_mapping = input.slot_mapping.data();
  const kv::KvCacheShape& shape = kv.shape();

  for (int64_t i = 0; i < int64_t(layers_.size()); ++i) {
    const DecoderLayer& layer = layers_[size_t(i)];
    const kernels::KvLayerView kv_layer{kv.k(i),        kv.v(i),     shape.block_size,
                                        shape.num_kv_heads, shape.head_dim, shape.dtype,
                                        shape.shared_value_dim, config_.layer_window(shard_.layer_begin + i)};
    be.rmsnorm(a.x, layer.attn_norm.data(), a.h, num_tokens, hidden, config_.rms_norm_eps);
    layer.attention->forward(be, a.h, a.y, step, kv_layer, ws);
    add_block_output(layer.attention->partial(), a.x, a.y, num_tokens * hidden);
    be.rmsnorm(a.x, layer.ffn_norm.data(), a.h, num_tokens, hidden, config_.rms_norm_eps);
    layer.ffn->forward(be, a.h, a.y, num_tokens, ws);
    add_block_output(layer.ffn->partial(), a.x, a.y, num_tokens * hidden);
  }

  if (hidden_out != nullptr) {
    std::memcpy(hidden_out, a.x, size_t(num_tokens * hidden) * sizeof(float));
    return;
  }
  // Only the requested rows go through the final norm and the (large) output head.
  if (num_logits == 0 || !shard_.computes_logits(config_.num_layers)) return;
  be.copy_rows(a.x, hidden, input.logits_indices.data(), num_logits, a.last);  // [num_logits, hidden]
  be.rmsnorm(a.last, output_norm_.data(), a.last, num_logits, hidden, config_.rms_norm_eps);
  lm_head_.apply(be, a.last, logits, num_logits);
}

}  // namespace llmesh::model
