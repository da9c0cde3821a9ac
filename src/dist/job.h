// One process's place in a multi-rank job: started under mpirun with
// --tp / --pp / --ep, it joins MPI, agrees on the layout with the other ranks
// and holds the communicators for the model's lifetime.
//
//   auto job = dist::Job::start(options);     // null: a plain single-process run
//   model::ModelShard shard = job->plan(config, weights);   // collective: ranks share their memory
//   ... load the shard (runtime::LoadedModel::load takes the job) ...
//   if (!job->serves()) { job->run_worker(model); return; }   // ranks > 0
//   engine over job->make_executor(model)                     // rank 0
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "dist/communicator.h"
#include "dist/parallel_layout.h"
#include "engine/executor.h"
#include "model/model.h"
#include "model/weight_store.h"

namespace llmesh::dist {

class MpiRuntime;

struct ParallelOptions {
  ParallelSizes sizes;
  std::string layer_split;   // --layer-split 10,9,9
  std::string expert_split;  // --expert-split 108,92,92,92
  double rank_memory_gib = 0;  // --rank-memory-gib: cap what this rank reports as usable (0: MemAvailable)
  // --rank-timeout: how long rank 0 waits for the others inside a command
  // before it declares the job lost (workers wait twice as long, so rank 0,
  // which serves the errors, notices first).
  double rank_timeout_s = 120;
  std::string comm = "mpi";  // --comm: mpi (CPU ranks), nccl (GPU ranks; MPI still launches and bootstraps)
};

class Job {
 public:
  // Joins MPI when the options ask for more than one rank or mpirun started the
  // process; null otherwise. Error when the job's rank count does not match.
  static std::unique_ptr<Job> start(const ParallelOptions& options);
  ~Job();

  int rank() const { return world_->rank(); }
  bool serves() const { return rank() == 0; }  // rank 0 serves HTTP and runs the engine
  // Fixes the layout for `config` (every rank calls it: they exchange their usable
  // memory; `weights`, not yet read, gives the sizes placement weighs) and
  // returns this rank's shard, its reduce wired to the stage. Rank 0 warns
  // about a rank whose part is larger than its memory.
  model::ModelShard plan(const model::ModelConfig& config, const model::WeightStore& weights);
  const ParallelLayout& layout() const { return layout_; }
  Communicator& world() { return *world_; }
  // What this rank moved so far, over the world and its stage.
  CommCounters counters() const;
  const Communicator& stage() const { return *stage_; }

  std::unique_ptr<engine::Executor> make_executor(model::Model& model);  // rank 0
  void run_worker(model::Model& model);                                  // other ranks

  // Rank 0: blocks until the executor breaks (a rank died or stopped
  // answering; returns why) or stop_watching() is called (returns nothing).
  // Whoever watches ends the job (world().abort) once the errors are out.
  std::optional<std::string> wait_until_lost();
  void stop_watching();
  // Logs `message` and ends every rank: for an error before the ranks are in step.
  [[noreturn]] void fail(const std::string& message);

 private:
  Job() = default;
  class StageSum;

  ParallelOptions options_;
  bool made_executor_ = false;  // its destructor stops the workers; else ~Job does
  std::unique_ptr<MpiRuntime> mpi_;
  std::unique_ptr<Communicator> bootstrap_;  // MPI under a NCCL world: its id exchange and abort
  std::unique_ptr<Communicator> world_, stage_;
  std::unique_ptr<StageSum> stage_sum_;
  ParallelLayout layout_;
  std::mutex watch_mu_;
  std::condition_variable watch_cv_;
  std::optional<std::string> lost_;
  bool watching_ = true;
};

}  // namespace llmesh::dist
