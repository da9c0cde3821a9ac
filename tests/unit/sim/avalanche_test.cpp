// The cache-avalanche scenario of issue 7 (examples/sim/avalanche.toml):
// 16 GPUs in one DP-attention + EP group, 32 agents whose contexts outgrow
// 250K tokens of KV per worker.
#include <gtest/gtest.h>

#include <cstdio>

#include "sim/report.h"
#include "sim/simulator.h"
#include "sim_test_util.h"

namespace llmesh::sim {
namespace {

SimResult run_avalanche(const std::vector<std::string>& overrides) {
  nlohmann::json tree = load_config_tree(testing::source_path("examples/sim/avalanche.toml"));
  for (const std::string& o : overrides) apply_override(tree, o);
  SimConfig config = parse_config(tree);
  SimResult result = run_simulation(config);
  std::printf("%s", summary_text(config, result).c_str());
  return result;
}

TEST(SimAvalanche, PinnedMajorityBeatsRoundRobinPrefillFirstSeveralTimes) {
  SimResult good = run_avalanche({});
  SimResult bad = run_avalanche({"routing.policy=round_robin", "scheduler.phase_policy=prefill_first"});
  EXPECT_GT(good.mean_utilization(), 3.0 * bad.mean_utilization());
  EXPECT_LT(good.makespan_s, bad.makespan_s);
  EXPECT_GT(good.hit_rate(), bad.hit_rate());
  EXPECT_GT(bad.mean_fraction(Activity::Waiting), good.mean_fraction(Activity::Waiting));
}

TEST(SimAvalanche, CapacityPastTwoWorkingSetsRemovesTheAvalanche) {
  SimResult tight = run_avalanche({});
  // Two agents at the context cap plus output and the shared prefix: ~340K.
  SimResult roomy = run_avalanche({"cache.kv_capacity_tokens=400000"});
  EXPECT_GT(tight.evictions_live, 0);
  EXPECT_EQ(roomy.evictions_live, 0);
  EXPECT_GT(roomy.hit_rate(), 0.85);
  EXPECT_LT(roomy.recomputed_tokens, tight.recomputed_tokens / 10 + 1);
  EXPECT_LT(roomy.makespan_s, tight.makespan_s);
}

TEST(SimAvalanche, SixteenAgentsFitTwoPerWorkerSpace) {
  // 16 agents on 16 workers: one agent per worker fits in 250K, no avalanche.
  SimResult one_each = run_avalanche({"workload.num_agents=16"});
  EXPECT_EQ(one_each.evictions_live, 0);
}

}  // namespace
}  // namespace llmesh::sim
