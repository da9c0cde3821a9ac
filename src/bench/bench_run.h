// `llmesh bench run`: connect, learn the server (model, context, cache flush,
// chat template overhead), then run every point not already finished in the
// results folder, writing reports after each point and at the end.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "bench/point_spec.h"
#include "bench/server_client.h"

namespace llmesh::bench {

struct BenchOptions {
  ClientOptions client;                        // url, model ("" = the first of /v1/models), api, key, timeout
  std::string tokenizer_path;                  // tokenizer.json, its folder, or a model (.gguf / HF folder)
  std::string corpus_path;                     // optional text file prompts are cut from
  std::string scenarios_path;                  // TOML / TSV; replaces the modes' points
  std::vector<std::string> modes = {"quick"};  // quick, sanity, interference, prefix, needle, sessions, soak, trace
  std::string trace_path;
  double scale = 1;
  double soak_duration_s = 0;  // --mode soak: how long (0: the mode's 2 h)
  int64_t soak_sessions = 0;   // --mode soak: concurrent agent sessions (0: the mode's 8)
  bool also_warm = false;  // add a warm twin of every fixed point (reported in its own tables)
  std::string out_dir;
  bool strict = false;  // exit code 2 when a point that ran is not valid
  std::string command_line;
  std::string llmesh_version;
};

// The points a run would measure (scenario file or modes, scaled).
std::vector<PointSpec> planned_points(const BenchOptions& options);

// Returns the process exit code: 0, 2 (strict and something invalid), 130 (stopped).
// Throws Error for bad options or an unreachable server.
int run_bench(const BenchOptions& options, std::atomic<bool>& stop);

}  // namespace llmesh::bench
