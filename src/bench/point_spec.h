// What one point of a benchmark run measures. A run is a list of points; a
// point's key (its kind and every parameter) names its records in
// requests.jsonl, so a resumed run reuses exactly the points it already
// finished with the same parameters.
//
// kinds:
//   fixed         ISL -> OSL at concurrency C, num_requests measured after num_warmups
//   interference  a decode background (fixed-point parameters) alone, then again with one
//                 long prefill (inject_isl -> inject_osl) sent inject_after_s into it
//   prefix_ab     prompt P cold, P again warm, Q cold (same length), `repetitions` times
//   needle        a fact at num_depths depths in contexts of context_lengths tokens
//   sessions      agent sessions sharing a system+tools prefix (see agent_sessions.h)
//   trace         replay of a JSONL trace (the `llmesh sim` format)
//   soak          agent sessions for a duration, with server samples (see soak.cpp)
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace llmesh::bench {

struct PointSpec {
  std::string kind = "fixed";
  std::string name;  // short label for reports ("1K->1K C16")

  // fixed, interference (the background), prefix_ab (isl only), trace (osl unused)
  int64_t isl = 1024, osl = 1, concurrency = 1, num_requests = 1, num_warmups = 1;
  std::string cache = "cold";  // fixed: "cold" (flush + unique prompts, verified) or "warm" (prompts primed first)

  // interference
  int64_t inject_isl = 131072, inject_osl = 1;
  double inject_after_s = 5;

  // prefix_ab
  int64_t repetitions = 3;

  // needle
  std::vector<int64_t> context_lengths;
  int64_t num_depths = 5;

  // sessions
  int64_t num_sessions = 8, num_turns = 6, shared_prefix_tokens = 8192;
  int64_t tool_tokens_min = 1000, tool_tokens_max = 10000;
  int64_t output_tokens_min = 500, output_tokens_max = 1500;
  double think_s_min = 0, think_s_max = 3;
  int64_t subagent_every_turns = 0;  // 0: no sub-agents; k: a sub-agent forks after every k-th turn
  int64_t subagent_turns = 2;

  // soak (also num_sessions, shared_prefix_tokens, the tool/output/think ranges and sub-agents above)
  double duration_s = 7200;
  int64_t compact_at_tokens = 100000;  // a session compacts past this prompt length (at most 70% of the context)
  double sample_every_s = 10;          // the server's /metrics is sampled this often

  // trace
  std::string trace_path;
  int64_t trace_block_tokens = 512;
  double token_scale = 1;  // trace token counts are multiplied by this (--scale)

  uint64_t seed = 1;

  std::string key() const;  // kind + every parameter that kind uses
};

nlohmann::json to_json(const PointSpec& spec);
PointSpec point_spec_from_json(const nlohmann::json& j);  // Error naming the field

// Short human form of a token count: 1024 -> "1K", 131072 -> "128K", 100 -> "100".
std::string format_tokens(int64_t num_tokens);

}  // namespace llmesh::bench
