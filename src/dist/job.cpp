#include "dist/job.h"

#include <cstdio>
#include <cstdlib>

#include "core/error.h"
#include "core/host_memory.h"
#include "core/log.h"
#include "dist/mpi_communicator.h"
#include "dist/nccl_communicator.h"
#include "dist/parallel_plan.h"
#include "dist/sharded_executor.h"

namespace llmesh::dist {

class Job::StageSum : public model::StageReduce {
 public:
  explicit StageSum(Communicator& stage) : stage_(stage) {}
  void sum(float* data, int64_t n) override { stage_.all_reduce_sum(data, n); }

 private:
  Communicator& stage_;
};

std::unique_ptr<Job> Job::start(const ParallelOptions& options) {
  if (!options.sizes.parallel() && !MpiRuntime::launched_by_mpirun()) return nullptr;
  std::unique_ptr<Job> job(new Job());
  job->options_ = options;
  job->mpi_ = std::make_unique<MpiRuntime>();
  job->world_ = job->mpi_->world();
  const int want = options.sizes.world(), have = job->world_->size();
  if (have != want) {
    const std::string message =
        want == 1 ? fmt::format("this job has {} ranks but no --tp, --pp or --ep asks for them", have)
                  : fmt::format("{} needs {} ranks; this job has {} (start it with: mpirun -np {} llmesh ...)",
                                options.sizes.to_string(), want, have, want);
    if (have == 1) llmesh::fail("{}", message);  // alone: an ordinary error, nobody waits
    job->fail(message);
  }
  if (options.comm == "nccl") {
    job->bootstrap_ = std::move(job->world_);
    job->world_ = make_nccl_communicator(*job->bootstrap_);
  }
  // Rank 0 gives up first and serves the errors; the split stage communicator inherits the timeout.
  job->world_->set_timeout(options.rank_timeout_s * (job->serves() ? 1 : 2));
  const int width = options.sizes.width();
  job->stage_ = job->world_->split(job->rank() / width, job->rank() % width);
  job->stage_sum_ = std::make_unique<StageSum>(*job->stage_);
  return job;
}

Job::~Job() {
  // Rank 0 gave up before it had an executor (a bad prompt, a failed load):
  // release the workers, who wait for its first command.
  if (world_ && serves() && !made_executor_ && world_->size() > 1) stop_shard_workers(*world_);
}

model::ModelShard Job::plan(const model::ModelConfig& config, const model::WeightStore& weights) {
  double mine = double(available_memory_bytes());
  if (options_.rank_memory_gib > 0) mine = options_.rank_memory_gib * double(1ull << 30);
  std::vector<double> memory(size_t(world_->size()));
  world_->all_gather(&mine, sizeof mine, memory.data());
  layout_ = plan_layout(config, options_.sizes, parse_split(options_.layer_split, "--layer-split"),
                        parse_split(options_.expert_split, "--expert-split"), memory,
                        placement_costs(weights, config));
  if (serves()) {
    const std::vector<int64_t> held = rank_weight_bytes(weights, config, layout_);
    for (size_t r = 0; r < held.size(); ++r) {
      if (double(held[r]) <= memory[r]) continue;
      log_warn("rank {} holds {:.2f} GiB of weights but reports {:.2f} GiB usable: it will page them from disk or "
               "run out of memory; add ranks or move layers/experts with --layer-split / --expert-split "
               "(llmesh inspect --plan shows the split)",
               r, double(held[r]) / double(1ull << 30), memory[r] / double(1ull << 30));
    }
  }
  model::ModelShard shard = layout_.shard(rank());
  shard.reduce = stage_sum_.get();
  return shard;
}

std::unique_ptr<engine::Executor> Job::make_executor(model::Model& model) {
  made_executor_ = true;
  return make_sharded_executor(model, *world_, layout_, [this](const std::string& why) {
    std::lock_guard lock(watch_mu_);
    if (!lost_) lost_ = why;
    watch_cv_.notify_all();
  });
}

CommCounters Job::counters() const {
  CommCounters sum = world_->counters();
  const CommCounters& stage = stage_->counters();
  sum.bytes_sent += stage.bytes_sent;
  sum.num_calls += stage.num_calls;
  sum.seconds += stage.seconds;
  return sum;
}

void Job::run_worker(model::Model& model) { run_shard_worker(model, *world_, layout_); }

std::optional<std::string> Job::wait_until_lost() {
  std::unique_lock lock(watch_mu_);
  watch_cv_.wait(lock, [&] { return lost_ || !watching_; });
  return lost_;
}

void Job::stop_watching() {
  std::lock_guard lock(watch_mu_);
  watching_ = false;
  watch_cv_.notify_all();
}

void Job::fail(const std::string& message) {
  std::fprintf(stderr, "llmesh: error (rank %d): %s\n", rank(), message.c_str());
  std::fflush(stderr);
  world_->abort(1);
  std::abort();  // abort() does not return; this tells the compiler
}

}  // namespace llmesh::dist
