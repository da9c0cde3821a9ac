// The forward pass of a decoder-only language model over a flattened batch.
//
// One step runs every scheduled token of every sequence at once — prefill
// chunks and decode tokens alike — each token carrying its position and its
// sequence's block table, so the same call serves `llmesh run`, the
// continuously batching server, and (later) a pipeline/tensor shard.
//
// A Model holds weights and constants only, on the device of its backend
// (kernels/backend.h); the activations of a step live in a Workspace the
// caller owns (model/workspace.h). forward is const and reentrant: calls with
// different workspaces may run at the same time on one model.
//
// Extending: an architecture is one file in model/arch/ that builds a Model
// from ModelFiles, plus a line in model/registry.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/backend.h"
#include "kv/kv_pool.h"
#include "model/model_config.h"
#include "model/model_shard.h"
#include "model/step_input.h"
#include "model/workspace.h"

namespace llmesh::model {

struct ModelFiles;

class Model {
 public:
  virtual ~Model() = default;
  virtual const ModelConfig& config() const = 0;
  // A workspace for this model sized for steps up to `max_step` (it grows if a
  // bigger step comes). Make one per concurrent forward and keep it across steps.
  virtual std::unique_ptr<Workspace> make_workspace(const StepShape& max_step) const = 0;
  // Runs the batch, writing K/V of its tokens into `kv` and the logits of
  // input.logits_indices to `logits` ([logits_indices.size(), vocab_size]).
  // `workspace` comes from this model's make_workspace and is used by one call at a time.
  virtual void forward(const StepInput& input, kv::KvPool& kv, Workspace& workspace, float* logits) const = 0;
  // The same for one pipeline stage of a sharded model (model/model_shard.h): a stage
  // that does not start at layer 0 reads the residual stream from `hidden_in`
  // ([num_tokens, hidden]) instead of embedding the tokens; one that does not end
  // at the last layer writes it to `hidden_out` and no logits. A whole model
  // needs neither (this default).
  virtual void forward_stage(const StepInput& input, kv::KvPool& kv, Workspace& workspace, const float* hidden_in,
                             float* hidden_out, float* logits) const {
    forward(input, kv, workspace, logits);
  }
};

// The KV pool a model of `config` caches into: its per-position rows (model_config.h kv_row_dim).
kv::KvCacheShape kv_cache_shape(const ModelConfig& config, int64_t block_size, int64_t num_blocks, DType dtype);

// Builds the model for files.config.arch (see model/registry.cpp) on `backend`:
// the whole model, or the part `shard` names.
// Error if the backend cannot run one of the weights' dtypes.
std::unique_ptr<Model> create_model(const ModelFiles& files, std::shared_ptr<kernels::Backend> backend,
                                    const ModelShard& shard = {});
// The same on a CPU backend whose parallel ops run on `pool` (which must outlive the model).
std::unique_ptr<Model> create_model(const ModelFiles& files, ThreadPool& pool, const ModelShard& shard = {});
// Architecture names the registry knows.
std::vector<std::string> registered_architectures();

}  // namespace llmesh::model
