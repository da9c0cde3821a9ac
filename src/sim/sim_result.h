// What one simulation run measured. Definitions (also in docs/sim.md and the
// report):
//   makespan: from t = 0 (the first agent may start) to the last token of the
//     last turn of any session.
//   utilization of a worker: (prefill + decode seconds) / makespan, where a
//     worker is "in prefill/decode" only while computing its own batch; see
//     timeline.h for waiting and idle.
//   cache hit rate: prompt tokens found in the worker's GPU prefix cache /
//     all prompt tokens. Host-tier restores are counted apart.
//   evictions: cache entries of live sessions (current context of a session
//     that will send more turns) trimmed to make room; entries of finished
//     sessions or of contexts replaced by compaction are counted apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/timeline.h"

namespace llmesh::sim {

struct TurnRecord {
  int session_id = 0;
  int turn_index = 0;
  bool is_compaction = false;
  int worker_id = 0;
  int decode_worker_id = -1;  // disaggregated only
  double arrival_s = 0;
  double first_token_s = 0;
  double finish_s = 0;
  int64_t prompt_tokens = 0;
  int64_t new_input_tokens = 0;
  int64_t hit_tokens = 0;
  int64_t restored_tokens = 0;
  int64_t output_tokens = 0;
};

struct WorkerStats {
  int worker_id = 0;
  int group_id = 0;
  std::string name;
  std::string role;  // mixed, prefill, decode
  double seconds[kNumActivities] = {0, 0, 0, 0};
  int64_t prefill_tokens = 0;
  int64_t decode_tokens = 0;
  int64_t kv_capacity_tokens = 0;
  int64_t peak_kv_tokens = 0;
  double utilization(double makespan_s) const {
    return makespan_s > 0 ? (seconds[0] + seconds[1]) / makespan_s : 0;
  }
};

struct Distribution {
  int64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};
Distribution summarize(std::vector<double> values);

struct SimResult {
  double makespan_s = 0;
  int num_sessions = 0;
  int num_requests = 0;
  int num_compactions = 0;
  int64_t num_steps = 0;
  int64_t prompt_tokens = 0;
  int64_t hit_tokens = 0;
  int64_t restored_tokens = 0;
  int64_t prefill_computed_tokens = 0;  // summed over step chunks
  int64_t recomputed_tokens = 0;        // context computed before and computed again
  int64_t output_tokens = 0;            // requested
  int64_t decode_step_tokens = 0;       // produced by decode steps (first tokens come from prefill)
  int64_t evictions_live = 0;
  int64_t evicted_tokens_live = 0;
  int64_t evictions_dead = 0;
  double wall_seconds = 0;
  std::vector<WorkerStats> workers;
  std::vector<TurnRecord> turns;
  Distribution ttft_s;
  Distribution turn_latency_s;
  ActivityTimeline timeline{0};

  double hit_rate() const { return prompt_tokens > 0 ? static_cast<double>(hit_tokens) / prompt_tokens : 0; }
  double mean_utilization() const;
  double mean_fraction(Activity activity) const;
};

}  // namespace llmesh::sim
