// Shared helpers for the simulator tests: small configs built in code.
#pragma once

#include <string>

#include "sim/config.h"

namespace llmesh::sim::testing {

// One TP worker, calibrated step times, big cache: the closed-form setting.
inline SimConfig single_worker_config() {
  nlohmann::json tree = {
      {"hardware", {{"num_gpus", 1}}},
      {"model", {{"total_params_b", 8}, {"kv_bytes_per_token", 131072}}},
      {"deployment", {{"mode", "tp"}}},
      {"cache", {{"kv_capacity_tokens", 1000000}}},
      {"scheduler", {{"chunk_tokens", 1000000}, {"decision_tick_s", 0}}},
      {"workload",
       {{"num_agents", 1},
        {"turns", {6, 6}},
        {"input_tokens", {200, 3000}},
        {"output_tokens", {20, 300}},
        {"think_time_s", {0.5, 4.0}}}},
      {"step_time",
       {{"model", "calibrated"},
        {"calibration",
         {{"prefill", {{"fixed_s", 0.01}, {"per_token_s", 5e-5}, {"per_token_context_s", 3e-10}}},
          {"decode", {{"fixed_s", 0.008}, {"per_context_token_s", 2e-8}, {"per_sequence_s", 3e-4}}}}}}},
  };
  return parse_config(tree);
}

inline std::string source_path(const std::string& relative) { return std::string(LLMESH_SOURCE_DIR) + "/" + relative; }

}  // namespace llmesh::sim::testing
