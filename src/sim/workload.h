// The sessions a simulation replays: generated agent swarms or a trace file.
//
// A session is a sequence of turns. Turn k's prompt is the shared prefix,
// then everything earlier turns added (their new input and their output),
// then turn k's new input; so a warm prefix cache reuses all but the new
// input. A turn may spawn sub-agent sessions; the parent's next turn then
// waits until all of them finish.
//
// Trace format (JSONL, the format `llmesh bench` is to write and read), one
// object per line:
//   {"session_id": "a1", "turn": 0, "input_tokens": 5200, "output_tokens": 800,
//    "delay_s": 1.5, "shared_prefix_hash_ids": [17, 18, 19]}
// input_tokens counts only the tokens this turn appends (turn 0 includes the
// shared prefix); delay_s is the wait before sending the turn, after the
// previous turn of the session finished (turn 0: after the start of the run);
// shared_prefix_hash_ids name trace_block_tokens-sized blocks shared with
// other sessions (system prompt, tools): sessions with the same list share
// one cached prefix.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/config.h"

namespace llmesh::sim {

struct TurnSpec {
  int64_t input_tokens = 0;   // new tokens appended by this turn
  int64_t output_tokens = 0;
  double delay_s = 0;         // before sending (think time)
  std::vector<int> spawned_session_ids;  // started when this turn finishes
};

struct SessionScript {
  int session_id = 0;
  std::string name;
  int parent_session_id = -1;
  double start_s = 0;  // root sessions only; sub-agents start when spawned
  uint64_t shared_prefix_id = 0;  // 0 = no shared prefix
  int64_t shared_prefix_tokens = 0;
  std::vector<TurnSpec> turns;
};

struct Workload {
  std::vector<SessionScript> sessions;  // indexed by session_id
};

Workload make_swarm_workload(const WorkloadConfig& config, uint64_t seed);
Workload load_trace_workload(const WorkloadConfig& config);
Workload make_workload(const WorkloadConfig& config, uint64_t seed);

}  // namespace llmesh::sim
