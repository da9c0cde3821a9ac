// Agent sessions: multi-turn conversations whose prompts grow turn by turn, the
// workload where prefix caching matters most. Used by the "sessions" mode
// (synthetic: N sessions sharing a system+tools prefix, M turns of 1K-10K
// tokens of tool output and 500-1,500 generated tokens, 0-3 s think time,
// optional sub-agents forked from a session's context) and by trace replay.
//
// Each turn sends the whole conversation (the previous assistant answers
// included, as a real agent does) and records TTFT, cached tokens and the
// session's previous prompt length, so reuse is measured against what this
// session sent before: reuse = min(cached, previous prompt) / previous prompt.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llmesh::bench {

struct TurnPlan {
  int64_t append_tokens = 0;  // new user/tool tokens this turn adds
  int64_t output_tokens = 1;
  double delay_s = 0;  // wait before sending (after the previous turn finished; turn 0: after the start)
};

struct SessionPlan {
  std::string session_id;
  std::vector<uint64_t> shared_prefix_ids;  // blocks of the shared system prompt (same ids = same text)
  int64_t shared_block_tokens = 0;          // tokens per shared block
  std::vector<TurnPlan> turns;
  int64_t subagent_every_turns = 0;  // fork a sub-agent after every k-th turn (0: never)
  int64_t subagent_turns = 0;
  std::vector<TurnPlan> subagent_turn_plans;  // [subagent_turns], reused for every fork
};

// One row of a trace file (docs/sim.md, "Trace replay format").
struct TraceRow {
  std::string session_id;
  int64_t turn = 0;
  int64_t input_tokens = 0, output_tokens = 0;
  double delay_s = 0;
  std::vector<uint64_t> shared_prefix_hash_ids;
};
std::vector<TraceRow> read_trace_file(const std::string& path);  // Error naming the file and line

// Sessions of a trace, token counts times `token_scale` (at least 1).
std::vector<SessionPlan> plan_trace_sessions(const std::vector<TraceRow>& rows, int64_t block_tokens,
                                             double token_scale);

}  // namespace llmesh::bench
