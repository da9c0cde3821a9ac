// Every activation of one forward step, in one place the caller owns.
//
// Model blocks hold only weights and constants; all per-step memory lives in
// a Workspace, so Model::forward is const and reentrant: two forwards on one
// model (two pipeline micro-batches) need only two workspaces (and two
// step inputs; the KV pool may be shared when their blocks are disjoint).
//
//   auto ws = model.make_workspace({.max_tokens = 2048, .max_logits = 64});
//   model.forward(step, kv, *ws, logits);  // grows ws only if the step is bigger than any before
//
// The activations are one allocation from the model's backend (device memory),
// carved into the named slices below; the host scratch (per-sequence block
// table pointers, MoE routing lists) is plain vectors. Growing reallocates
// everything at once: contents do not survive from one step to the next.
// The workspace must not outlive the model (its backend frees the memory).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/backend.h"
#include "model/model_config.h"

namespace llmesh::model {

// The largest step a workspace is sized for.
struct StepShape {
  int64_t max_tokens = 0;  // rows of the flattened batch (T)
  int64_t max_logits = 0;  // rows of logits (L)
};

// Per-token widths (in floats) of a decoder's activations.
struct ActivationDims {
  int64_t hidden = 0;             // residual stream
  int64_t q_dim = 0;              // num_heads * head_dim
  int64_t kv_dim = 0;             // num_kv_heads * head_dim
  int64_t ffn_dim = 0;            // the widest SwiGLU intermediate: dense, or one expert
  int64_t num_experts = 0;        // 0 for dense models
  int64_t experts_per_token = 0;
  int64_t attn_scratch = 0;       // extra attention scratch (multi-head latent attention's)

  static ActivationDims of(const ModelConfig& config);
  bool operator==(const ActivationDims&) const = default;
};

// Pointers into the workspace's device memory, valid for capacity() rows until
// the next reserve() that grows it. Shapes are for a step of T tokens and L logit rows.
struct Activations {
  float* x = nullptr;           // [T, hidden] residual stream
  float* h = nullptr;           // [T, hidden] normed input of a block
  float* y = nullptr;           // [T, hidden] output of a block
  float* q = nullptr;           // [T, num_heads, head_dim]
  float* k = nullptr;           // [T, num_kv_heads, head_dim] this step's keys, before store_kv
  float* v = nullptr;           // [T, num_kv_heads, head_dim]
  float* attn = nullptr;        // [T, num_heads, head_dim] attention output, before o_proj
  float* attn_scratch = nullptr;  // [T, attn_scratch] (MLA only; blocks/mla_attention.cpp lays it out)
  float* ffn_gate = nullptr;    // [T, ffn_dim] gate(h), then silu(gate) * up
  float* ffn_up = nullptr;      // [T, ffn_dim]
  float* router = nullptr;      // [T, num_experts] router logits, then probabilities (MoE only)
  float* expert_in = nullptr;   // [T, hidden] the tokens routed to one expert, gathered (MoE only)
  float* expert_out = nullptr;  // [T, hidden] that expert's output (MoE only)
  float* last = nullptr;        // [L, hidden] the rows that get logits, normed
};

// Host scratch of a mixture-of-experts layer: which tokens go to which expert.
struct MoeRouting {
  std::vector<int32_t> order;           // [num_experts] expert ids, sorted per token for its top-k
  std::vector<int32_t> choice;          // [T * k] the k experts of each token, best first
  std::vector<float> choice_weight;     // [T * k] their router weights
  std::vector<int32_t> expert_offsets;  // [num_experts + 1] expert e's rows are [offsets[e], offsets[e+1])
  std::vector<int32_t> token_ids;       // [T * k] tokens grouped by expert, ascending within an expert
  std::vector<float> token_weights;     // [T * k] the matching router weights
  // The sigmoid router's per-token scratch (blocks/router.cpp).
  std::vector<float> score, choice_score;  // [num_experts] sigmoid(logits), and plus the correction bias
  std::vector<float> group_score;          // [expert groups]
  std::vector<int32_t> groups;             // [expert groups] group ids, best first
};

class Workspace {
 public:
  // Holds nothing (for a model that needs no activations, e.g. a test double).
  Workspace() = default;
  // Sized for `initial` at once (zero sizes: allocated by the first step).
  Workspace(kernels::Backend& backend, const ActivationDims& dims, const StepShape& initial);
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  // Makes room for a step of num_tokens rows and num_logits logit rows; allocates
  // only when the step is bigger than the capacity (then by at least 1.5x).
  void reserve(int64_t num_tokens, int64_t num_logits);

  const StepShape& capacity() const { return capacity_; }
  const ActivationDims& dims() const { return dims_; }
  kernels::Backend* backend() const { return backend_; }
  size_t num_bytes() const { return arena_.num_bytes(); }

  const Activations& act() const { return act_; }
  // Host scratch, resized by the model per step (vectors only grow: no allocation in the steady state).
  std::vector<const int32_t*>& block_tables() { return block_tables_; }  // [S] each sequence's block ids
  MoeRouting& moe() { return moe_; }

 private:
  kernels::Backend* backend_ = nullptr;
  ActivationDims dims_;
  StepShape capacity_;
  kernels::Buffer arena_;  // every Activations slice, each aligned to kernels::kBufferAlignment
  Activations act_;
  std::vector<const int32_t*> block_tables_;
  MoeRouting moe_;
};

}  // namespace llmesh::model
