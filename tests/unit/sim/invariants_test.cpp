// Invariants that must hold for any configuration: tokens conserved, KV
// capacity never exceeded, no worker in two activities at once, and every
// worker's time accounted exactly once over the makespan.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "core/error.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace llmesh::sim {
namespace {

struct InvariantChecker : SimObserver {
  std::map<int, std::vector<std::pair<double, double>>> spans;  // worker -> [start, end)
  int64_t kv_violations = 0;
  int64_t kv_samples = 0;
  void on_activity(int worker_id, Activity, double start_s, double end_s) override {
    spans[worker_id].push_back({start_s, end_s});
  }
  void on_kv_usage(int, int64_t used, int64_t capacity, double) override {
    kv_samples++;
    if (used > capacity || used < 0) kv_violations++;
  }
};

nlohmann::json base_tree() {
  return {
      {"seed", 5},
      {"hardware", {{"num_gpus", 16}}},
      {"model",
       {{"total_params_b", 30}, {"active_params_b", 3}, {"num_layers", 48}, {"hidden_size", 2048},
        {"kv_bytes_per_token", 98304}, {"bytes_per_param", 1}}},
      {"deployment", {{"mode", "dp_attention"}, {"dp_size", 8}, {"replicas", 2}}},
      {"cache", {{"kv_capacity_tokens", 60000}}},
      {"scheduler", {{"chunk_tokens", 4096}, {"max_running_requests", 4}, {"decision_tick_s", 0.01}}},
      {"workload",
       {{"num_agents", 24},
        {"stagger_s", 0.3},
        {"turns", {3, 12}},
        {"input_tokens", {300, 6000}},
        {"output_tokens", {50, 400}},
        {"think_time_s", {0, 2}},
        {"shared_prefix_tokens", 2000},
        {"context_cap_tokens", 30000},
        {"compact_to_tokens", 4000}}},
  };
}

void check_invariants(const nlohmann::json& tree) {
  SimConfig config = parse_config(tree);
  Workload workload = make_workload(config.workload, config.seed);
  InvariantChecker checker;
  SimResult r = run_simulation(config, workload, &checker);
  ASSERT_GT(r.makespan_s, 0);

  // KV capacity never exceeded (also enforced inside WorkerCache).
  EXPECT_GT(checker.kv_samples, 0);
  EXPECT_EQ(checker.kv_violations, 0);
  for (const WorkerStats& w : r.workers) EXPECT_LE(w.peak_kv_tokens, w.kv_capacity_tokens);

  // One activity at a time; spans tile [0, makespan] exactly.
  ASSERT_EQ(checker.spans.size(), r.workers.size());
  for (auto& [worker, spans] : checker.spans) {
    std::sort(spans.begin(), spans.end());
    double covered = 0, last_end = 0;
    for (const auto& [start, end] : spans) {
      EXPECT_GE(start, last_end - 1e-9) << "worker " << worker << " in two activities at " << start;
      EXPECT_LE(end, r.makespan_s + 1e-9);
      covered += end - start;
      last_end = std::max(last_end, end);
    }
    EXPECT_NEAR(covered, r.makespan_s, 1e-6 * r.makespan_s) << "worker " << worker;
    const WorkerStats& w = r.workers[worker];
    EXPECT_NEAR(w.seconds[0] + w.seconds[1] + w.seconds[2] + w.seconds[3], r.makespan_s, 1e-6 * r.makespan_s);
  }

  // Prompt tokens: each is a cache hit, a host restore, or computed by a prefill chunk.
  EXPECT_EQ(r.prompt_tokens, r.hit_tokens + r.restored_tokens + r.prefill_computed_tokens);
  // Output tokens: the first of each request comes from prefill, the rest from decode steps.
  EXPECT_EQ(r.output_tokens, r.decode_step_tokens + r.num_requests);
  int64_t worker_prefill = 0, worker_decode = 0;
  for (const WorkerStats& w : r.workers) {
    worker_prefill += w.prefill_tokens;
    worker_decode += w.decode_tokens;
  }
  EXPECT_EQ(worker_prefill, r.prefill_computed_tokens);
  EXPECT_EQ(worker_decode, r.decode_step_tokens);

  // Each session's context grows by exactly its turns' input and output, and
  // restarts as shared prefix + summary after a compaction; all turns ran.
  std::map<int, std::vector<TurnRecord>> by_session;
  for (const TurnRecord& t : r.turns) by_session[t.session_id].push_back(t);
  ASSERT_EQ(by_session.size(), workload.sessions.size());
  for (auto& [session_id, turns] : by_session) {
    const SessionScript& script = workload.sessions[session_id];
    std::sort(turns.begin(), turns.end(), [](const TurnRecord& a, const TurnRecord& b) { return a.arrival_s < b.arrival_s; });
    size_t num_regular = 0;
    int64_t expected_prompt = script.shared_prefix_tokens;
    for (const TurnRecord& t : turns) {
      if (t.is_compaction) {
        EXPECT_EQ(t.prompt_tokens, expected_prompt + t.new_input_tokens);
        expected_prompt = script.shared_prefix_tokens + t.output_tokens;
        continue;
      }
      const TurnSpec& spec = script.turns[t.turn_index];
      int64_t new_tokens = t.turn_index == 0 ? spec.input_tokens - script.shared_prefix_tokens : spec.input_tokens;
      EXPECT_EQ(t.new_input_tokens, new_tokens);
      EXPECT_EQ(t.prompt_tokens, expected_prompt + new_tokens) << "session " << session_id << " turn " << t.turn_index;
      EXPECT_EQ(t.output_tokens, spec.output_tokens);
      EXPECT_LE(t.arrival_s, t.first_token_s);
      EXPECT_LE(t.first_token_s, t.finish_s);
      expected_prompt += new_tokens + spec.output_tokens;
      num_regular++;
    }
    EXPECT_EQ(num_regular, script.turns.size());
  }
}

TEST(SimInvariants, DpAttentionPinnedMajority) { check_invariants(base_tree()); }

TEST(SimInvariants, RoundRobinPrefillFirstSessionAware) {
  nlohmann::json tree = base_tree();
  tree["routing"]["policy"] = "round_robin";
  tree["scheduler"]["phase_policy"] = "prefill_first";
  tree["cache"]["eviction"] = "session_aware";
  check_invariants(tree);
}

TEST(SimInvariants, TpReplicasCacheAwareWithHostTierAndSubagents) {
  nlohmann::json tree = base_tree();
  tree["deployment"] = {{"mode", "tp"}, {"tp_size", 2}, {"replicas", 8}};
  tree["routing"]["policy"] = "cache_aware";
  tree["cache"]["host_capacity_tokens"] = 200000;
  tree["workload"]["subagent_probability"] = 0.2;
  tree["scheduler"]["phase_policy"] = "prefill_interval";
  check_invariants(tree);
}

TEST(SimInvariants, DisaggregatedLeastLoadedDecodeFirst) {
  nlohmann::json tree = base_tree();
  tree["deployment"] = {{"mode", "disaggregated"}, {"prefill_workers", 4}, {"decode_workers", 4},
                        {"dp_size", 2}, {"replicas", 2}};
  tree["routing"]["policy"] = "least_loaded";
  tree["scheduler"]["phase_policy"] = "decode_first";
  check_invariants(tree);
}

TEST(SimInvariants, RandomRoutingTinyCache) {
  nlohmann::json tree = base_tree();
  tree["routing"]["policy"] = "random";
  tree["cache"]["kv_capacity_tokens"] = 35000;  // barely one request: heavy eviction
  check_invariants(tree);
}

TEST(SimDeterminism, SameSeedSameResultOtherSeedDiffers) {
  SimConfig config = parse_config(base_tree());
  SimResult a = run_simulation(config);
  SimResult b = run_simulation(config);
  EXPECT_EQ(a.makespan_s, b.makespan_s);
  EXPECT_EQ(a.num_steps, b.num_steps);
  EXPECT_EQ(a.hit_tokens, b.hit_tokens);
  config.seed = 6;
  SimResult c = run_simulation(config);
  EXPECT_NE(a.makespan_s, c.makespan_s);
}

TEST(SimErrors, RequestLargerThanKvIsAnError) {
  nlohmann::json tree = base_tree();
  tree["cache"]["kv_capacity_tokens"] = 5000;  // shared prefix + one input exceed it
  SimConfig config = parse_config(tree);
  EXPECT_THROW(run_simulation(config), Error);
}

}  // namespace
}  // namespace llmesh::sim
