// What the forward pass needs to know about a model, whatever file it came from.
//
// Filled from a Hugging Face config.json or from GGUF metadata; both readers
// must agree field by field (a test loads the same weights both ways).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmesh::model {

// How RoPE pairs the dimensions of a head.
//   Neox:        (i, i + head_dim/2)  — HF checkpoints of every family, GGUF qwen2/qwen3/qwen3moe
//   Interleaved: (2i, 2i + 1)        — GGUF llama (its converter permutes the Q/K rows to match)
enum class RopeStyle { Neox, Interleaved };

// How a MoE router turns its logits into expert scores.
//   Softmax: over all experts (Qwen3-MoE); top-k on the probabilities.
//   Sigmoid: per expert (GLM-4.5, DeepSeek V3); top-k on sigmoid + the score-correction
//            bias, optionally limited to the best expert groups; weights from the sigmoid alone.
enum class RouterGating { Softmax, Sigmoid };

// RoPE scaling for contexts past the trained length (HF `rope_scaling`, GGUF `rope.scaling.*`,
// or `--rope-scaling` on the command line). model/blocks/rope.cpp turns it into frequencies.
struct RopeScaling {
  // "" (none), "linear", "dynamic" (NTK-aware, static: see rope.h), "yarn" or "llama3".
  std::string type;
  float factor = 1.0f;
  int64_t original_max_position = 0;  // the pre-training context; 0: max_position (or 8192 for llama3)
  // llama3
  float low_freq_factor = 1.0f;
  float high_freq_factor = 4.0f;
  // yarn
  float beta_fast = 32.0f, beta_slow = 1.0f;  // rotations that bound the interpolation ramp
  float attention_factor = 0.0f;              // cos/sin magnitude; 0: derived from factor (and mscale)
  float mscale = 0.0f, mscale_all_dim = 0.0f; // DeepSeek's form of the attention factor
  float attn_factor_multiplier = 1.0f;        // GGUF rope.scaling.attn_factor: times the derived factor
  float ext_factor = 1.0f;                    // GGUF rope.scaling.yarn_ext_factor: how much of the ramp applies
  bool truncate = true;                       // round the ramp's ends to whole dimensions (HF `truncate`)

  bool enabled() const { return !type.empty(); }
  bool operator==(const RopeScaling&) const = default;
};

struct ModelConfig {
  // Architecture family as registered in model/registry: "llama", "qwen2", "qwen3", "qwen3moe", "glm4moe",
  // "deepseek2", "gpt-oss".
  std::string arch;
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;  // dense FFN width
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;  // may differ from hidden_size / num_heads (Qwen3)
  int64_t max_position = 0;  // context length the model was trained for
  float rms_norm_eps = 1e-6f;
  float rope_theta = 10000.0f;
  // Leading dims of each head that RoPE rotates (0: all of head_dim); the rest pass through.
  // GLM-4.5: head_dim * partial_rotary_factor (0.5). inv_freq then runs over these dims.
  int64_t rotary_dim = 0;
  RopeStyle rope_style = RopeStyle::Neox;
  RopeScaling rope_scaling;
  bool tie_word_embeddings = false;  // output projection reuses token_embd
  bool attention_bias = false;       // q/k/v projections have biases (Qwen2)
  bool qk_norm = false;              // per-head RMSNorm of q and k before RoPE (Qwen3)
  // A learned logit per head in each softmax's denominator, with no value (gpt-oss's attention
  // sinks, blk.N.attn_sinks.weight): a head can put its attention nowhere.
  bool attention_sinks = false;
  // Sliding-window attention: a windowed layer's query at position p attends to the keys
  // p - sliding_window < j <= p only (its last sliding_window positions, itself included; HF's
  // and llama.cpp's convention); 0: no window. Which layers: every one when window_layers is
  // empty (Mistral 7B v0.1), else those whose flag is set, one flag per layer (Qwen2's
  // max_window_layers, HF `layer_types`; later Gemma 2/3 and gpt-oss, whose local layers
  // alternate with global ones). The window does not limit the context: max_context() ignores it.
  int64_t sliding_window = 0;
  std::vector<bool> window_layers;  // [num_layers] or empty (all)

  // Multi-head latent attention (DeepSeek V2 / V3, Kimi K2) when kv_lora_rank > 0. Then head_dim is
  // the query/key head width qk_nope_dim + rope_dim() (what scores are scaled by), num_kv_heads is 1
  // (one cached row per position, shared by every head: the latent and the rotary key), and each
  // head's values have v_head_dim dims.
  int64_t q_lora_rank = 0;   // queries through a rank-q_lora_rank bottleneck; 0: one projection (V2-Lite)
  int64_t kv_lora_rank = 0;  // the latent: what the cache holds in place of K and V
  int64_t qk_nope_dim = 0;   // per head, the query/key dims without RoPE
  int64_t v_head_dim = 0;

  // Mixture of experts (num_experts == 0 for dense models).
  int64_t num_experts = 0;
  int64_t num_experts_per_token = 0;
  int64_t moe_intermediate_size = 0;
  bool norm_topk_prob = true;  // renormalize the top-k router weights to sum to 1
  // GLM-4.5 / DeepSeek V3 options (the defaults are Qwen3-MoE's).
  int64_t first_dense_layers = 0;  // layers [0, n) have a dense FFN of intermediate_size (first_k_dense_replace)
  int64_t num_shared_experts = 0;  // always-on experts: one SwiGLU of moe_intermediate_size * this, added
  RouterGating router_gating = RouterGating::Softmax;
  bool router_bias = false;        // e_score_correction_bias (exp_probs_b): added to the scores for the choice only
  int64_t expert_groups = 1;       // n_group: experts in equal consecutive groups
  int64_t expert_groups_used = 1;  // topk_group: experts are chosen within this many best groups
  float routed_scaling = 1.0f;     // routed_scaling_factor: multiplies the routed experts' weights
  // > 0: the experts' activation is gpt-oss's clamped SwiGLU at this limit (swiglu_limit, 7):
  // g = min(gate, limit), u = clamp(up, -limit, limit), g * sigmoid(1.702 g) * (u + 1). The
  // router's and experts' biases (gpt-oss) are optional tensors, used wherever a file has them.
  float swiglu_limit = 0.0f;

  bool is_mla() const { return kv_lora_rank > 0; }
  bool is_moe() const { return num_experts > 0; }
  bool is_moe_layer(int64_t layer) const { return is_moe() && layer >= first_dense_layers; }
  int64_t rope_dim() const { return rotary_dim > 0 ? rotary_dim : head_dim; }
  // The window of layer `layer` (0: full attention): what its KvLayerView::window is.
  int64_t layer_window(int64_t layer) const {
    return sliding_window > 0 && (window_layers.empty() || window_layers[size_t(layer)]) ? sliding_window : 0;
  }
  int64_t shared_expert_intermediate() const { return moe_intermediate_size * num_shared_experts; }
  // The longest context the model runs: max_position, stretched by RoPE scaling (linear and
  // dynamic: max_position x factor; yarn: original x factor, at least max_position; llama3: unchanged,
  // its max_position is already the long one). --ctx-size may not exceed it.
  int64_t max_context() const;
  // Values per cached row (one row per position and kv head): head_dim for K and V each, or for
  // MLA one row of [latent | rotary key] whose latent part doubles as the values.
  int64_t kv_row_dim() const { return is_mla() ? kv_lora_rank + rope_dim() : head_dim; }
};

// The factor YaRN applies to cos and sin (so to q and k: attention scores scale by its
// square); 1 for every other kind of RoPE.
float rope_attention_factor(const ModelConfig& config);

// DeepSeek's YaRN softmax factor for multi-head latent attention: scores scale by
// (0.1 mscale_all_dim ln(factor) + 1)^2 when the yarn scaling sets mscale_all_dim; else 1.
float mla_score_factor(const ModelConfig& config);

// What the command line changes in the config the files give (`--rope-scaling` and friends).
struct ConfigOverrides {
  std::optional<RopeScaling> rope_scaling;  // replaces the files' scaling; type "" turns it off
};

}  // namespace llmesh::model
