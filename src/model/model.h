// The forward pass of a decoder-only language model over a flattened batch.
//
// One step runs every scheduled token of every sequence at once — prefill
// chunks and decode tokens alike — each token carrying its position and its
// sequence's block table, so the same call serves `llmesh run`, the
// continuously batching server, and (later) a pipeline/tensor shard.
//
// Extending: an architecture is one file in model/arch/ that builds a Model
// from ModelFiles, plus a line in model/registry.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kv/kv_pool.h"
#include "model/model_config.h"

namespace llmesh {

struct ModelFiles;

// What one step computes. Filled by the caller (run loop or scheduler).
struct StepInput {
  std::vector<int32_t> token_ids;        // [num_tokens]
  std::vector<int32_t> positions;        // [num_tokens] position within its sequence
  std::vector<int32_t> seq_index;        // [num_tokens] index into block_tables
  std::vector<int64_t> slot_mapping;     // [num_tokens] KV slot = block_id * block_size + offset
  std::vector<const int32_t*> block_tables;  // [num_sequences] block ids of each sequence
  std::vector<int32_t> logits_indices;   // token indices whose next-token logits are wanted

  int64_t num_tokens() const { return int64_t(token_ids.size()); }
  void clear() {
    token_ids.clear(), positions.clear(), seq_index.clear(), slot_mapping.clear();
    block_tables.clear(), logits_indices.clear();
  }
};

class Model {
 public:
  virtual ~Model() = default;
  virtual const ModelConfig& config() const = 0;
  // Runs the batch, writing K/V of its tokens into `kv` and the logits of
  // input.logits_indices to `logits` ([logits_indices.size(), vocab_size]).
  virtual void forward(const StepInput& input, KvPool& kv, float* logits) = 0;
};

// Builds the model for files.config.arch (see model/registry.cpp).
std::unique_ptr<Model> create_model(const ModelFiles& files, ThreadPool& pool);
// Architecture names the registry knows.
std::vector<std::string> registered_architectures();

}  // namespace llmesh
