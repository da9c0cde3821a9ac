// Speed of the simulator itself (issue 7 targets: 32 agents x 80 turns on 16
// workers < 1 s; 1,000 agents < 30 s, Release build). The bounds here are
// loose because the test machine is shared; the measured times are printed.
#include <gtest/gtest.h>

#include <cstdio>

#include "sim/report.h"
#include "sim/simulator.h"
#include "sim_test_util.h"

namespace llmesh::sim {
namespace {

SimResult timed_run(const std::vector<std::string>& overrides) {
  nlohmann::json tree = load_config_tree(testing::source_path("examples/sim/avalanche.toml"));
  for (const std::string& o : overrides) apply_override(tree, o);
  SimConfig config = parse_config(tree);
  SimResult result = run_simulation(config);
  std::printf("%s", summary_text(config, result).c_str());
  return result;
}

TEST(SimSpeed, ThirtyTwoAgentsEightyTurnsSixteenWorkers) {
  SimResult r = timed_run({"workload.turns=80"});
  std::printf("32 agents x 80 turns on 16 workers: %.3f s wall\n", r.wall_seconds);
  EXPECT_LT(r.wall_seconds, 5.0);
}

TEST(SimSpeed, ThousandAgents) {
  SimResult r = timed_run({"workload.num_agents=1000", "routing.load_bound_factor=1.25"});
  std::printf("1000 agents on 16 workers: %.3f s wall\n", r.wall_seconds);
  EXPECT_LT(r.wall_seconds, 60.0);
}

}  // namespace
}  // namespace llmesh::sim
