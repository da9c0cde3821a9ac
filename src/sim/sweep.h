// `--sweep PARAM=v1,v2,...`: the same config run once per value of one
// parameter (a dotted config path such as workload.num_agents or
// routing.policy), summarized as a table (sweep.csv, terminal) and a chart
// (sweep.html: utilization and hit rate, makespan, and each run's timeline).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "sim/config.h"
#include "sim/sim_result.h"

namespace llmesh::sim {

struct SweepSpec {
  std::string path;
  std::vector<nlohmann::json> values;
};

// Parses "section.key=v1,v2,..."; values are JSON where they parse, else strings.
SweepSpec parse_sweep(const std::string& text);

struct SweepPoint {
  std::string value_text;
  SimConfig config;
  SimResult result;
};

std::vector<SweepPoint> run_sweep(const nlohmann::json& base_tree, const SweepSpec& spec);

std::string sweep_table_text(const SweepSpec& spec, const std::vector<SweepPoint>& points);
// Writes sweep.csv and sweep.html into out_dir (created).
void write_sweep_report(const SweepSpec& spec, const std::vector<SweepPoint>& points, const std::string& out_dir);

}  // namespace llmesh::sim
