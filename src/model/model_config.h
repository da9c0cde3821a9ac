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
  // Every layer attends to the last `sliding_window` tokens only (Mistral 7B v0.1); 0: no window.
  // Attention here is full, which is the same up to the window, so max_context() stops there.
  int64_t sliding_window = 0;

  // Mixture of experts (num_experts == 0 for dense models).
  int64_t num_experts = 0;
  int64_t num_experts_per_token = 0;
  int64_t moe_intermediate_size = 0;
  bool norm_topk_prob = true;  // renormalize the top-k router weights to sum to 1

  bool is_moe() const { return num_experts > 0; }
  // The longest context the model runs: max_position, stretched by RoPE scaling (linear and
  // dynamic: max_position x factor; yarn: original x factor, at least max_position; llama3: unchanged,
  // its max_position is already the long one); at most sliding_window. --ctx-size may not exceed it.
  int64_t max_context() const;
};

// What the command line changes in the config the files give (`--rope-scaling` and friends).
struct ConfigOverrides {
  std::optional<RopeScaling> rope_scaling;  // replaces the files' scaling; type "" turns it off
};

}  // namespace llmesh::model
