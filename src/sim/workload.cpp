#include "sim/workload.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <random>

#include "core/error.h"
#include "sim/router.h"

namespace llmesh::sim {
namespace {

int64_t draw(std::mt19937_64& rng, IntRange range) {
  return std::uniform_int_distribution<int64_t>(range.min, range.max)(rng);
}
double draw(std::mt19937_64& rng, RealRange range) {
  if (range.max <= range.min) return range.min;
  return std::uniform_real_distribution<double>(range.min, range.max)(rng);
}

}  // namespace

Workload make_swarm_workload(const WorkloadConfig& config, uint64_t seed) {
  std::mt19937_64 rng(mix_hash(seed));
  Workload workload;
  const uint64_t kSwarmPrefixId = 1;
  auto add_session = [&](int parent_id, int64_t num_turns) {
    SessionScript s;
    s.session_id = static_cast<int>(workload.sessions.size());
    s.parent_session_id = parent_id;
    s.name = parent_id < 0 ? "agent" + std::to_string(s.session_id) : "sub" + std::to_string(s.session_id);
    if (config.shared_prefix_tokens > 0) {
      s.shared_prefix_id = kSwarmPrefixId;
      s.shared_prefix_tokens = config.shared_prefix_tokens;
    }
    for (int64_t t = 0; t < num_turns; ++t) {
      TurnSpec turn;
      turn.input_tokens = draw(rng, config.input_tokens) + (t == 0 ? config.shared_prefix_tokens : 0);
      turn.output_tokens = draw(rng, config.output_tokens);
      turn.delay_s = t == 0 ? 0 : draw(rng, config.think_time_s);
      s.turns.push_back(turn);
    }
    workload.sessions.push_back(std::move(s));
    return workload.sessions.back().session_id;
  };
  for (int a = 0; a < config.num_agents; ++a) {
    int id = add_session(-1, draw(rng, config.turns));
    workload.sessions[id].start_s = a * config.stagger_s;
  }
  // Sub-agents: drawn per root turn (not the last), one level deep.
  if (config.subagent_probability > 0) {
    std::bernoulli_distribution spawn(config.subagent_probability);
    for (int a = 0; a < config.num_agents; ++a) {
      size_t num_turns = workload.sessions[a].turns.size();
      for (size_t t = 0; t + 1 < num_turns; ++t) {
        if (!spawn(rng)) continue;
        int64_t count = draw(rng, config.subagents_per_spawn);
        for (int64_t k = 0; k < count; ++k) {
          int sub = add_session(a, draw(rng, config.subagent_turns));
          workload.sessions[a].turns[t].spawned_session_ids.push_back(sub);
        }
      }
    }
  }
  return workload;
}

Workload load_trace_workload(const WorkloadConfig& config) {
  std::ifstream in(config.trace_path);
  check(in.good(), "workload.trace: cannot open {}", config.trace_path);
  struct Row {
    int64_t turn;
    TurnSpec spec;
    std::vector<uint64_t> hash_ids;
  };
  std::map<std::string, std::vector<Row>> rows_by_session;
  std::vector<std::string> session_order;
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json row;
    try {
      row = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      fail("{}:{}: not JSON: {}", config.trace_path, line_number, e.what());
    }
    auto need = [&](const char* key) -> const nlohmann::json& {
      check(row.contains(key), "{}:{}: missing \"{}\"", config.trace_path, line_number, key);
      return row.at(key);
    };
    const nlohmann::json& sid = need("session_id");
    std::string session = sid.is_string() ? sid.get<std::string>() : sid.dump();
    Row r;
    r.turn = need("turn").get<int64_t>();
    r.spec.input_tokens = need("input_tokens").get<int64_t>();
    r.spec.output_tokens = need("output_tokens").get<int64_t>();
    r.spec.delay_s = row.value("delay_s", 0.0);
    check(r.spec.input_tokens >= 1 && r.spec.output_tokens >= 1 && r.spec.delay_s >= 0,
          "{}:{}: input_tokens and output_tokens must be >= 1 and delay_s >= 0", config.trace_path, line_number);
    if (row.contains("shared_prefix_hash_ids")) r.hash_ids = row["shared_prefix_hash_ids"].get<std::vector<uint64_t>>();
    if (!rows_by_session.count(session)) session_order.push_back(session);
    rows_by_session[session].push_back(std::move(r));
  }
  check(!session_order.empty(), "{}: the trace holds no turns", config.trace_path);
  Workload workload;
  for (const std::string& name : session_order) {
    std::vector<Row>& rows = rows_by_session[name];
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.turn < b.turn; });
    SessionScript s;
    s.session_id = static_cast<int>(workload.sessions.size());
    s.name = name;
    s.start_s = rows.front().spec.delay_s;
    if (!rows.front().hash_ids.empty()) {
      uint64_t chain = 0x7ace;
      for (uint64_t id : rows.front().hash_ids) chain = mix_hash(chain ^ id);
      s.shared_prefix_id = chain | 1;  // nonzero
      s.shared_prefix_tokens = static_cast<int64_t>(rows.front().hash_ids.size()) * config.trace_block_tokens;
      check(s.shared_prefix_tokens <= rows.front().spec.input_tokens,
            "{}: session {}: shared prefix ({} blocks x {} tokens) is longer than turn 0's input_tokens ({})",
            config.trace_path, name, rows.front().hash_ids.size(), config.trace_block_tokens,
            rows.front().spec.input_tokens);
    }
    for (size_t i = 0; i < rows.size(); ++i) {
      TurnSpec turn = rows[i].spec;
      if (i == 0) turn.delay_s = 0;  // folded into start_s
      s.turns.push_back(turn);
    }
    workload.sessions.push_back(std::move(s));
  }
  return workload;
}

Workload make_workload(const WorkloadConfig& config, uint64_t seed) {
  return config.kind == WorkloadKind::Trace ? load_trace_workload(config) : make_swarm_workload(config, seed);
}

}  // namespace llmesh::sim
