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

struct RopeScaling {
  std::string type;  // "" (none) or "llama3"; others are rejected at load
  float factor = 1.0f;
  float low_freq_factor = 1.0f;
  float high_freq_factor = 4.0f;
  int64_t original_max_position = 8192;
};

struct ModelConfig {
  // Architecture family as registered in model/registry: "llama", "qwen2", "qwen3", "qwen3moe".
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

  bool is_moe() const { return num_experts > 0; }
};

}  // namespace llmesh::model
