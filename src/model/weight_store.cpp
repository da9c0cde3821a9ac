#include "model/weight_store.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/mapped_file.h"
#include "model/model_config.h"

namespace llmesh::model {

void WeightStore::keep_mapping(std::shared_ptr<const MappedFile> mapping) { mappings_.push_back(std::move(mapping)); }

void WeightStore::add_file_tensor(const Tensor& tensor) { file_tensors_.push_back(tensor); }

void WeightStore::add(const std::string& canonical_name, Tensor view) {
  view.name = canonical_name;
  auto [it, inserted] = by_name_.emplace(canonical_name, std::move(view));
  check(inserted, "{}: duplicate tensor '{}'", model_path_, canonical_name);
}

const Tensor& WeightStore::get(const std::string& canonical_name) const {
  const Tensor* t = find(canonical_name);
  check(t != nullptr, "{}: missing tensor '{}'", model_path_, canonical_name);
  return *t;
}

const Tensor* WeightStore::find(const std::string& canonical_name) const {
  auto it = by_name_.find(canonical_name);
  return it == by_name_.end() ? nullptr : &it->second;
}

std::vector<std::string> WeightStore::names() const {
  std::vector<std::string> out;
  out.reserve(by_name_.size());
  for (const auto& [name, tensor] : by_name_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

uint64_t WeightStore::file_bytes() const {
  uint64_t total = 0;
  for (const Tensor& t : file_tensors_) total += t.num_bytes();
  return total;
}

void WeightStore::load(WeightResidency residency) const {
  for (const auto& mapping : mappings_) mapping->load("loading " + mapping->path(), residency);
}

namespace {

// Upper bounds far beyond any real model; they keep absurd configs from turning
// into absurd allocations later.
constexpr int64_t kMaxWidth = int64_t(1) << 20;  // hidden, ffn, head_dim, vocab rows
constexpr int64_t kMaxVocab = int64_t(1) << 24;
constexpr int64_t kMaxLayers = 4096;
constexpr int64_t kMaxHeads = 4096;
constexpr int64_t kMaxExperts = 4096;
constexpr int64_t kMaxPosition = int64_t(1) << 27;

void check_range(int64_t value, int64_t min, int64_t max, const char* what, const std::string& source) {
  check(value >= min && value <= max, "{}: {} = {} is out of range [{}, {}]", source, what, value, min, max);
}

void check_rope_scaling(const ModelConfig& c, const std::string& source) {
  const RopeScaling& s = c.rope_scaling;
  if (!s.enabled()) return;
  static const char* const kTypes[] = {"linear", "dynamic", "yarn", "llama3"};
  check(std::find(std::begin(kTypes), std::end(kTypes), s.type) != std::end(kTypes),
        "{}: unsupported rope scaling type '{}' (llmesh supports linear, dynamic, yarn, llama3)", source, s.type);
  check(s.factor >= 1 && s.factor < 1e4f, "{}: rope scaling factor {} is out of range [1, 10000)", source, s.factor);
  check_range(s.original_max_position, 1, kMaxPosition, "rope scaling original_max_position_embeddings", source);
  if (s.type == "llama3") {
    check(s.high_freq_factor > s.low_freq_factor && s.low_freq_factor > 0,
          "{}: rope_scaling needs 0 < low_freq_factor < high_freq_factor (got {} and {})", source, s.low_freq_factor,
          s.high_freq_factor);
  }
  if (s.type == "yarn") {
    // The attention factor is folded into the scores (blocks/attention.cpp), exact only when all dims
    // rotate or when it is 1 (DeepSeek's mscale = mscale_all_dim).
    check(c.rope_dim() == c.head_dim || std::abs(rope_attention_factor(c) - 1.0f) < 1e-6f,
          "{}: yarn RoPE scaling with partial rotary ({} of {} head dims) and an attention factor of {} is not "
          "supported",
          source, c.rope_dim(), c.head_dim, rope_attention_factor(c));
    check(s.beta_fast > s.beta_slow && s.beta_slow > 0, "{}: yarn needs beta_fast > beta_slow > 0 (got {} and {})",
          source, s.beta_fast, s.beta_slow);
    check(s.attention_factor >= 0 && s.attention_factor < 100 && s.attn_factor_multiplier > 0 &&
              s.attn_factor_multiplier < 100 && s.ext_factor >= 0 && s.ext_factor <= 1,
          "{}: yarn attention_factor {}, attn_factor {} or ext_factor {} is out of range", source, s.attention_factor,
          s.attn_factor_multiplier, s.ext_factor);
    check(std::isfinite(s.mscale) && std::isfinite(s.mscale_all_dim) && std::abs(s.mscale) < 100 &&
              std::abs(s.mscale_all_dim) < 100,
          "{}: yarn mscale {} / mscale_all_dim {} is out of range", source, s.mscale, s.mscale_all_dim);
  }
  check_range(c.max_context(), 1, kMaxPosition, "the scaled context (max_position x rope scaling factor)", source);
}

}  // namespace

void check_model_config(const ModelConfig& c, const std::string& source) {
  check_range(c.vocab_size, 1, kMaxVocab, "vocab_size", source);
  check_range(c.hidden_size, 1, kMaxWidth, "hidden_size", source);
  check_range(c.num_layers, 1, kMaxLayers, "num_layers", source);
  check_range(c.num_heads, 1, kMaxHeads, "num_heads", source);
  check_range(c.num_kv_heads, 1, c.num_heads, "num_kv_heads", source);
  check(c.num_heads % c.num_kv_heads == 0, "{}: num_heads {} is not a multiple of num_kv_heads {}", source, c.num_heads,
        c.num_kv_heads);
  check_range(c.head_dim, 2, kMaxWidth, "head_dim", source);
  check(c.head_dim % 2 == 0, "{}: head_dim {} must be even for RoPE", source, c.head_dim);
  check(c.rotary_dim >= 0 && c.rotary_dim <= c.head_dim && c.rotary_dim % 2 == 0 && c.rope_dim() >= 2,
        "{}: rotary dims {} (head_dim * partial_rotary_factor) must be even and in [2, head_dim {}]", source,
        c.rotary_dim, c.head_dim);
  check_range(c.max_position, 1, kMaxPosition, "max_position", source);
  check_range(c.sliding_window, 0, kMaxPosition, "sliding_window", source);
  check(c.window_layers.empty() || int64_t(c.window_layers.size()) == c.num_layers,
        "{}: {} sliding-window layer flags for {} layers", source, c.window_layers.size(), c.num_layers);
  if (c.is_mla()) {
    check_range(c.kv_lora_rank, 1, kMaxWidth, "kv_lora_rank", source);
    check_range(c.q_lora_rank, 0, kMaxWidth, "q_lora_rank", source);
    check_range(c.qk_nope_dim, 1, kMaxWidth, "qk_nope_head_dim", source);
    check_range(c.v_head_dim, 1, kMaxWidth, "v_head_dim", source);
    check(c.head_dim == c.qk_nope_dim + c.rope_dim() && c.num_kv_heads == 1,
          "{}: inconsistent MLA head sizes: head_dim {} is not qk_nope_head_dim {} + qk_rope_head_dim {}", source,
          c.head_dim, c.qk_nope_dim, c.rope_dim());
    // the attention workspace reuses the query slices (model/workspace.cpp)
    check(c.qk_nope_dim <= c.kv_lora_rank, "{}: qk_nope_head_dim {} exceeds kv_lora_rank {} (unsupported)", source,
          c.qk_nope_dim, c.kv_lora_rank);
  }
  check(c.rms_norm_eps > 0 && c.rms_norm_eps < 1, "{}: rms_norm_eps {} is out of range", source, c.rms_norm_eps);
  check(c.rope_theta > 0 && c.rope_theta < 1e12f, "{}: rope_theta {} is out of range", source, c.rope_theta);
  if (c.is_moe()) {
    check_range(c.num_experts, 1, kMaxExperts, "num_experts", source);
    check_range(c.num_experts_per_token, 1, c.num_experts, "num_experts_per_token", source);
    check_range(c.moe_intermediate_size, 1, kMaxWidth, "moe_intermediate_size", source);
    if (c.intermediate_size != 0) check_range(c.intermediate_size, 1, kMaxWidth, "intermediate_size", source);
    check_range(c.first_dense_layers, 0, c.num_layers, "first_k_dense_replace (leading dense layers)", source);
    if (c.first_dense_layers > 0) {
      check_range(c.intermediate_size, 1, kMaxWidth, "intermediate_size (of the leading dense layers)", source);
    }
    check_range(c.num_shared_experts, 0, kMaxExperts, "n_shared_experts", source);
    if (c.num_shared_experts > 0) {
      check_range(c.shared_expert_intermediate(), 1, kMaxWidth, "shared experts' intermediate size", source);
    }
    check_range(c.expert_groups, 1, c.num_experts, "n_group (expert groups)", source);
    check(c.num_experts % c.expert_groups == 0, "{}: n_group (expert groups) {} does not divide the {} experts",
          source, c.expert_groups, c.num_experts);
    check_range(c.expert_groups_used, 1, c.expert_groups, "topk_group (expert groups used)", source);
    if (c.expert_groups > 1) {
      check(c.router_gating == RouterGating::Sigmoid, "{}: expert groups need the sigmoid router", source);
      // a group scores the sum of its two best experts
      check(c.num_experts / c.expert_groups >= 2, "{}: n_group {} leaves fewer than 2 experts per group", source,
            c.expert_groups);
      check(c.num_experts_per_token <= c.expert_groups_used * (c.num_experts / c.expert_groups),
            "{}: {} experts per token do not fit in topk_group {} groups of {}", source, c.num_experts_per_token,
            c.expert_groups_used, c.num_experts / c.expert_groups);
    }
    check(std::isfinite(c.routed_scaling) && c.routed_scaling > 0 && c.routed_scaling < 1e6f,
          "{}: routed_scaling_factor {} is out of range", source, c.routed_scaling);
    check(std::isfinite(c.swiglu_limit) && c.swiglu_limit >= 0 && c.swiglu_limit < 1e6f,
          "{}: swiglu_limit {} is out of range", source, c.swiglu_limit);
  } else {
    check_range(c.intermediate_size, 1, kMaxWidth, "intermediate_size", source);
  }
  check_rope_scaling(c, source);
}

namespace {

class ShapeChecker {
 public:
  ShapeChecker(const WeightStore& weights) : weights_(weights) {}

  void require(const std::string& name, std::vector<int64_t> shape) const {
    const Tensor* t = weights_.find(name);
    check(t != nullptr, "{}: missing required tensor '{}'", weights_.model_path(), name);
    expect_shape(*t, shape);
  }
  void optional(const std::string& name, std::vector<int64_t> shape) const {
    if (const Tensor* t = weights_.find(name)) expect_shape(*t, shape);
  }

 private:
  void expect_shape(const Tensor& t, const std::vector<int64_t>& shape) const {
    if (t.shape == shape) return;
    Tensor expected;
    expected.shape = shape;
    fail("{}: tensor '{}' has shape {}, but the config implies {}", weights_.model_path(), t.name, t.shape_string(),
         expected.shape_string());
  }
  const WeightStore& weights_;
};

void check_mla_weights(const WeightStore& weights, const ModelConfig& c, const std::string& blk) {
  const ShapeChecker shapes(weights);
  const int64_t hidden = c.hidden_size, heads = c.num_heads, latent = c.kv_lora_rank;
  if (c.q_lora_rank > 0) {
    shapes.require(blk + "attn_q_a.weight", {c.q_lora_rank, hidden});
    shapes.require(blk + "attn_q_a_norm.weight", {c.q_lora_rank});
    shapes.require(blk + "attn_q_b.weight", {heads * c.head_dim, c.q_lora_rank});
  } else {
    shapes.require(blk + "attn_q.weight", {heads * c.head_dim, hidden});
  }
  shapes.require(blk + "attn_kv_a_mqa.weight", {latent + c.rope_dim(), hidden});
  shapes.require(blk + "attn_kv_a_norm.weight", {latent});
  if (weights.has(blk + "attn_k_b.weight")) {
    shapes.require(blk + "attn_k_b.weight", {heads, latent, c.qk_nope_dim});
    shapes.require(blk + "attn_v_b.weight", {heads, c.v_head_dim, latent});
  } else {
    shapes.require(blk + "attn_kv_b.weight", {heads * (c.qk_nope_dim + c.v_head_dim), latent});
  }
  shapes.require(blk + "attn_output.weight", {hidden, heads * c.v_head_dim});
}

}  // namespace

void check_weights_match_config(const WeightStore& weights, const ModelConfig& c) {
  const ShapeChecker shapes(weights);
  const int64_t hidden = c.hidden_size;
  const int64_t q_dim = c.num_heads * c.head_dim, kv_dim = c.num_kv_heads * c.head_dim;
  shapes.require("token_embd.weight", {c.vocab_size, hidden});
  shapes.require("output_norm.weight", {hidden});
  if (c.tie_word_embeddings) {
    shapes.optional("output.weight", {c.vocab_size, hidden});
  } else {
    shapes.require("output.weight", {c.vocab_size, hidden});
  }
  shapes.optional("rope_freqs.weight", {c.rope_dim() / 2});
  for (int64_t layer = 0; layer < c.num_layers; ++layer) {
    const std::string blk = "blk." + std::to_string(layer) + ".";
    shapes.require(blk + "attn_norm.weight", {hidden});
    if (c.is_mla()) {
      check_mla_weights(weights, c, blk);
    } else {
      shapes.require(blk + "attn_q.weight", {q_dim, hidden});
      shapes.require(blk + "attn_k.weight", {kv_dim, hidden});
      shapes.require(blk + "attn_v.weight", {kv_dim, hidden});
      shapes.require(blk + "attn_output.weight", {hidden, q_dim});
    }
    if (c.attention_bias) {
      shapes.require(blk + "attn_q.bias", {q_dim});
      shapes.require(blk + "attn_k.bias", {kv_dim});
      shapes.require(blk + "attn_v.bias", {kv_dim});
    }
    shapes.optional(blk + "attn_output.bias", {hidden});
    if (c.attention_sinks) shapes.require(blk + "attn_sinks.weight", {c.num_heads});
    if (c.qk_norm) {
      shapes.require(blk + "attn_q_norm.weight", {c.head_dim});
      shapes.require(blk + "attn_k_norm.weight", {c.head_dim});
    }
    shapes.require(blk + "ffn_norm.weight", {hidden});
    if (c.is_moe_layer(layer)) {
      const int64_t ffn = c.moe_intermediate_size;
      shapes.require(blk + "ffn_gate_inp.weight", {c.num_experts, hidden});
      shapes.optional(blk + "ffn_gate_inp.bias", {c.num_experts});
      if (c.router_bias) shapes.require(blk + "exp_probs_b.bias", {c.num_experts});
      if (c.num_shared_experts > 0) {
        const int64_t shared = c.shared_expert_intermediate();
        shapes.require(blk + "ffn_gate_shexp.weight", {shared, hidden});
        shapes.require(blk + "ffn_up_shexp.weight", {shared, hidden});
        shapes.require(blk + "ffn_down_shexp.weight", {hidden, shared});
      }
      for (int64_t e = 0; e < c.num_experts; ++e) {
        const std::string suffix = "." + std::to_string(e) + ".weight";
        shapes.require(blk + "ffn_gate_exps" + suffix, {ffn, hidden});
        shapes.require(blk + "ffn_up_exps" + suffix, {ffn, hidden});
        shapes.require(blk + "ffn_down_exps" + suffix, {hidden, ffn});
        const std::string bias = "." + std::to_string(e) + ".bias";
        shapes.optional(blk + "ffn_gate_exps" + bias, {ffn});
        shapes.optional(blk + "ffn_up_exps" + bias, {ffn});
        shapes.optional(blk + "ffn_down_exps" + bias, {hidden});
      }
    } else {
      const int64_t ffn = c.intermediate_size;
      shapes.require(blk + "ffn_gate.weight", {ffn, hidden});
      shapes.require(blk + "ffn_up.weight", {ffn, hidden});
      shapes.require(blk + "ffn_down.weight", {hidden, ffn});
    }
  }
}

}  // namespace llmesh::model
