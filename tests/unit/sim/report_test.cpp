// The written outputs agree with the in-memory result: timeline.csv bins add
// up to each worker's activity seconds, CSV row counts match, the HTML is
// self-contained, and sweep specs parse.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/error.h"
#include "sim/report.h"
#include "sim/simulator.h"
#include "sim/sweep.h"
#include "sim_test_util.h"

namespace llmesh::sim {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SimReport, FilesAgreeWithTheResult) {
  nlohmann::json tree = load_config_tree(testing::source_path("examples/sim/single_gpu.toml"));
  SimConfig config = parse_config(tree);
  SimResult result = run_simulation(config);
  std::string dir = std::string(LLMESH_BINARY_DIR) + "/sim_report_test";
  std::filesystem::remove_all(dir);
  write_report(config, result, dir);

  // timeline.csv: per worker, each activity column sums to the worker's seconds.
  std::istringstream timeline(read_file(dir + "/timeline.csv"));
  std::string line;
  std::getline(timeline, line);
  EXPECT_EQ(line, "worker_id,bin_start_s,bin_end_s,prefill_s,decode_s,waiting_s,idle_s");
  std::map<int, std::array<double, 4>> sums;
  while (std::getline(timeline, line)) {
    std::istringstream cells(line);
    std::string cell;
    std::vector<double> v;
    while (std::getline(cells, cell, ',')) v.push_back(std::stod(cell));
    ASSERT_EQ(v.size(), 7u);
    for (int a = 0; a < 4; ++a) sums[static_cast<int>(v[0])][a] += v[3 + a];
  }
  ASSERT_EQ(sums.size(), result.workers.size());
  for (const WorkerStats& w : result.workers) {
    for (int a = 0; a < 4; ++a) EXPECT_NEAR(sums[w.worker_id][a], w.seconds[a], 1e-3 + 1e-6 * result.makespan_s);
  }

  // turns.csv: one row per request.
  std::string turns = read_file(dir + "/turns.csv");
  EXPECT_EQ(std::count(turns.begin(), turns.end(), '\n'), result.num_requests + 1);

  nlohmann::json summary = nlohmann::json::parse(read_file(dir + "/summary.json"));
  EXPECT_DOUBLE_EQ(summary["makespan_s"].get<double>(), result.makespan_s);
  EXPECT_TRUE(summary["definitions"].contains("utilization"));

  std::string html = read_file(dir + "/report.html");
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("<script src"), std::string::npos);  // self-contained
  EXPECT_EQ(html.find("http://www.w3.org/2000/svg") != std::string::npos, true);
}

TEST(SimSweep, ParsesValues) {
  SweepSpec spec = parse_sweep("routing.policy=pinned,round_robin");
  EXPECT_EQ(spec.path, "routing.policy");
  ASSERT_EQ(spec.values.size(), 2u);
  EXPECT_EQ(spec.values[1], "round_robin");
  SweepSpec numbers = parse_sweep("workload.num_agents=8,16");
  EXPECT_EQ(numbers.values[0], 8);
  EXPECT_THROW(parse_sweep("workload.num_agents"), Error);
  EXPECT_THROW(parse_sweep("workload.num_agents=8,,16"), Error);
}

TEST(SimSweep, RunsEachValue) {
  nlohmann::json tree = load_config_tree(testing::source_path("examples/sim/single_gpu.toml"));
  std::vector<SweepPoint> points = run_sweep(tree, parse_sweep("workload.num_agents=1,4"));
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].result.num_sessions, 1);
  EXPECT_EQ(points[1].result.num_sessions, 4);
}

}  // namespace
}  // namespace llmesh::sim
