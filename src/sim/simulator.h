// The discrete-event simulation of a serving cluster.
//
// Workers (attention ranks, each tp_size GPUs) belong to groups; a group runs
// one step at a time and all its workers are in the same phase during it
// (DP attention + EP synchronizes them; a TP replica is a group of one). A
// step lasts as long as its slowest worker. Between steps each group's
// scheduler admits queued requests (FIFO, by free KV), picks a phase by the
// phase policy, and builds the step: chunked prefill under a per-worker token
// budget, or one decode token for every running request.
//
// Events (turn issued, KV transfer done, step end, scheduler wake) are
// processed in time order; ties break by event kind, then by insertion order,
// so a run is a pure function of config and seed.
#pragma once

#include "sim/config.h"
#include "sim/sim_result.h"
#include "sim/workload.h"

namespace llmesh::sim {

// Hooks for tests and tools; all optional.
class SimObserver {
 public:
  virtual ~SimObserver() = default;
  virtual void on_activity(int worker_id, Activity activity, double start_s, double end_s) {}
  virtual void on_kv_usage(int worker_id, int64_t used_tokens, int64_t capacity_tokens, double now_s) {}
};

SimResult run_simulation(const SimConfig& config, const Workload& workload, SimObserver* observer = nullptr);
SimResult run_simulation(const SimConfig& config, SimObserver* observer = nullptr);

}  // namespace llmesh::sim
