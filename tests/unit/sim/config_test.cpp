#include <gtest/gtest.h>

#include "core/error.h"
#include "sim/config.h"
#include "sim_test_util.h"

namespace llmesh::sim {
namespace {

TEST(SimConfig, TomlAndJsonGiveTheSameConfig) {
  nlohmann::json from_toml = parse_toml_text(R"(
name = "t"
seed = 4
[deployment]
mode = "dp_attention"
dp_size = 4
[hardware]
num_gpus = 4
[workload]
num_agents = 8
turns = [3, 9]
think_time_s = [0, 2.5]
[routing]
policy = "round_robin"
)", "inline.toml");
  nlohmann::json from_json = nlohmann::json::parse(R"({"name": "t", "seed": 4,
    "deployment": {"mode": "dp_attention", "dp_size": 4}, "hardware": {"num_gpus": 4},
    "workload": {"num_agents": 8, "turns": [3, 9], "think_time_s": [0, 2.5]},
    "routing": {"policy": "round_robin"}})");
  EXPECT_EQ(from_toml, from_json);
  SimConfig c = parse_config(from_toml);
  EXPECT_EQ(c.deployment.mode, DeploymentMode::DpAttention);
  EXPECT_EQ(c.workload.turns.min, 3);
  EXPECT_EQ(c.workload.turns.max, 9);
  EXPECT_DOUBLE_EQ(c.workload.think_time_s.max, 2.5);
  EXPECT_EQ(c.routing.policy, RoutingPolicy::RoundRobin);
  EXPECT_EQ(num_workers(c), 4);
}

TEST(SimConfig, ErrorsNameTheKey) {
  auto message = [](const nlohmann::json& tree) {
    try {
      parse_config(tree);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({{"cache", {{"kv_capacity_tokenz", 5}}}}).find("cache.kv_capacity_tokenz"), std::string::npos);
  EXPECT_NE(message({{"routing", {{"policy", "sticky"}}}}).find("pinned, round_robin"), std::string::npos);
  EXPECT_NE(message({{"hardwar", {}}}).find("unknown section"), std::string::npos);
  EXPECT_NE(message({{"deployment", {{"mode", "dp_attention"}, {"dp_size", 8}}}}).find("needs 8 GPUs"),
            std::string::npos);
  EXPECT_NE(message({{"workload", {{"turns", {5, 2}}}}}).find("workload.turns"), std::string::npos);
  EXPECT_NE(message({{"step_time", {{"model", "calibrated"}}}}).find("calibration_file"), std::string::npos);
  EXPECT_THROW(parse_toml_text("a = [", "broken.toml"), Error);
}

TEST(SimConfig, OverridesAndDerivedCapacity) {
  nlohmann::json tree = nlohmann::json::object();
  apply_override(tree, "routing.policy=least_loaded");
  apply_override(tree, "workload.turns=[2,4]");
  apply_override(tree, "cache.kv_capacity_tokens=1234");
  SimConfig c = parse_config(tree);
  EXPECT_EQ(c.routing.policy, RoutingPolicy::LeastLoaded);
  EXPECT_EQ(c.workload.turns.max, 4);
  EXPECT_EQ(kv_capacity_tokens_per_worker(c), 1234);
  // Derived: (80 GB * 0.9 - 8B params * 2 bytes) / 128 KiB per token.
  SimConfig d = parse_config(nlohmann::json::object());
  EXPECT_EQ(kv_capacity_tokens_per_worker(d), static_cast<int64_t>((72e9 - 16e9) / 131072));
}

TEST(SimConfig, ExamplesParse) {
  for (const char* name : {"avalanche.toml", "single_gpu.toml", "disaggregated.toml", "trace_replay.toml"}) {
    SCOPED_TRACE(name);
    SimConfig c = parse_config(load_config_tree(testing::source_path(std::string("examples/sim/") + name)));
    EXPECT_GT(kv_capacity_tokens_per_worker(c), 0);
  }
}

}  // namespace
}  // namespace llmesh::sim
