// What the forward pass needs to know about a model, whatever file it came from.
//
// Filled from a Hugging Face config.json or from GGUF metadata; both readers
// must agree field by field (a test loads the same weights both ways).
#pragma once

#include <cstdint>
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

struct RopeScaling {
  std::string type;  // "" (none) or "llama3"; others are rejected at load
  float factor = 1.0f;
  float low_freq_factor = 1.0f;
  float high_freq_factor = 4.0f;
  int64_t original_max_position = 8192;
};

struct ModelConfig {
  // Architecture family as registered in model/registry: "llama", "qwen2", "qwen3", "qwen3moe", "glm4moe".
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

  bool is_moe() const { return num_experts > 0; }
  bool is_moe_layer(int64_t layer) const { return is_moe() && layer >= first_dense_layers; }
  int64_t rope_dim() const { return rotary_dim > 0 ? rotary_dim : head_dim; }
  int64_t shared_expert_intermediate() const { return moe_intermediate_size * num_shared_experts; }
};

}  // namespace llmesh::model
