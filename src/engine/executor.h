// The executor seam: where a step runs. The engine loop is
//   schedule -> build StepInput -> executor.execute(step) -> StepOutput -> sample, update
// The scheduler and the KV cache manager (engine thread, host memory) decide
// what runs and which block ids hold what; the executor owns the model, the
// KV pool those ids index, and the per-step workspace, on its device.
//
// LocalExecutor runs the model in this process. A multi-rank executor
// broadcasts the (plain-data) StepInput to the other ranks and returns rank
// 0's logits; a GPU executor keeps the pool and workspace in device memory.
// Sampling stays on the engine side: constraint masks, penalties and stop
// rules need each request's host state (see docs/engine.md).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kv/kv_pool.h"
#include "model/model.h"

namespace llmesh::engine {

struct StepOutput {
  int64_t vocab_size = 0;
  std::vector<float> logits;  // [step.logits_indices.size(), vocab_size]

  std::span<float> row(int64_t i) { return {logits.data() + i * vocab_size, size_t(vocab_size)}; }
};

// The executor is also the BlockMemory of the pool it owns: lower tiers and
// transfers copy one block's K/V out and in (bytes_per_block, read_block, write_block).
class Executor : public kv::BlockMemory {
 public:
  virtual const model::ModelConfig& config() const = 0;
  // Reserves the KV pool (kv.dtype: its element type) and the workspace for steps
  // up to `max_step`; called once by the engine before the first step. Error if
  // the device cannot hold or attend over K/V of that dtype.
  virtual void reserve(const kv::KvCacheShape& kv, const model::StepShape& max_step) = 0;
  // Runs one step: writes the K/V of its tokens into the pool and returns the
  // logits of step.logits_indices (valid until the next call).
  virtual StepOutput& execute(const model::StepInput& step) = 0;
};

// Runs `model` (not owned) in this process, on the CPU.
std::unique_ptr<Executor> make_local_executor(model::Model& model);

}  // namespace llmesh::engine
