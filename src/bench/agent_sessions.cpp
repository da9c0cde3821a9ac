#include "bench/agent_sessions.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "bench/analysis.h"
#include "bench/run_context.h"
#include "bench/stats.h"
#include "core/error.h"

namespace llmesh::bench {

using nlohmann::json;

std::vector<TraceRow> read_trace_file(const std::string& path) {
  std::ifstream in(path);
  check(in.good(), "trace {}: cannot open", path);
  std::vector<TraceRow> rows;
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json j = json::parse(line, nullptr, false);
    check(!j.is_discarded() && j.is_object(), "{}:{}: not a JSON object", path, line_no);
    try {
      TraceRow row;
      const json& id = j.at("session_id");
      row.session_id = id.is_string() ? id.get<std::string>() : id.dump();
      row.turn = j.at("turn").get<int64_t>();
      row.input_tokens = j.at("input_tokens").get<int64_t>();
      row.output_tokens = j.at("output_tokens").get<int64_t>();
      row.delay_s = j.value("delay_s", 0.0);
      row.shared_prefix_hash_ids = j.value("shared_prefix_hash_ids", std::vector<uint64_t>{});
      check(row.turn >= 0 && row.input_tokens >= 0 && row.output_tokens >= 1 && row.delay_s >= 0,
            "turn, input_tokens and delay_s must be >= 0 and output_tokens >= 1");
      rows.push_back(std::move(row));
    } catch (const json::exception& e) {
      fail("{}:{}: {}", path, line_no, e.what());
    } catch (const Error& e) {
      fail("{}:{}: {}", path, line_no, e.what());
    }
  }
  check(!rows.empty(), "trace {}: no rows", path);
  return rows;
}

std::vector<SessionPlan> plan_trace_sessions(const std::vector<TraceRow>& rows, int64_t block_tokens,
                                             double token_scale) {
  std::map<std::string, std::vector<const TraceRow*>> by_session;
  std::vector<std::string> order;
  for (const TraceRow& row : rows) {
    auto [it, inserted] = by_session.try_emplace(row.session_id);
    if (inserted) order.push_back(row.session_id);
    it->second.push_back(&row);
  }
  auto scale = [&](int64_t n) { return std::max<int64_t>(1, std::llround(static_cast<double>(n) * token_scale)); };
  std::vector<SessionPlan> plans;
  for (const std::string& id : order) {
    std::vector<const TraceRow*>& turns = by_session[id];
    std::sort(turns.begin(), turns.end(), [](const TraceRow* a, const TraceRow* b) { return a->turn < b->turn; });
    SessionPlan plan;
    plan.session_id = id;
    plan.shared_prefix_ids = turns.front()->shared_prefix_hash_ids;
    plan.shared_block_tokens = scale(block_tokens);
    const int64_t prefix_tokens = static_cast<int64_t>(plan.shared_prefix_ids.size()) * plan.shared_block_tokens;
    for (size_t t = 0; t < turns.size(); ++t) {
      TurnPlan turn;
      turn.append_tokens = scale(turns[t]->input_tokens);
      if (t == 0) turn.append_tokens = std::max<int64_t>(1, turn.append_tokens - prefix_tokens);
      turn.output_tokens = scale(turns[t]->output_tokens);
      turn.delay_s = turns[t]->delay_s;
      plan.turns.push_back(turn);
    }
    plans.push_back(std::move(plan));
  }
  return plans;
}

namespace {

// Runs one conversation (a session or a sub-agent) from `messages` on.
// Returns the last prompt's length (for a sub-agent's reuse baseline).
int64_t run_conversation(RunContext& ctx, const PointSpec& spec, ServerClient& client, const SessionPlan& plan,
                         const std::string& session_id, const std::string& role, json messages,
                         const std::vector<TurnPlan>& turns, int64_t previous_prompt_tokens, Clock::time_point start,
                         int64_t& subagent_counter) {
  Clock::time_point last_finish = start;
  for (size_t t = 0; t < turns.size() && !ctx.stopping(); ++t) {
    const TurnPlan& turn = turns[t];
    const Clock::time_point at =
        last_finish + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(turn.delay_s));
    while (Clock::now() < at && !ctx.stopping()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (ctx.stopping()) break;
    const uint64_t seed = ctx.seed(spec, session_id, static_cast<int64_t>(t));
    const std::string label = role == "subagent" && t == 0  ? "Sub-task: "
                              : t == 0 && role == "session" ? "Task: "
                                                            : "Tool output:\n";
    messages.push_back({{"role", "user"}, {"content", label + ctx.prompts->text_of_tokens(turn.append_tokens, seed)}});
    RequestRecord r;
    r.point_key = spec.key();
    r.role = role;
    r.index = static_cast<int64_t>(t);
    r.session_id = session_id;
    r.turn = static_cast<int64_t>(t);
    r.previous_prompt_tokens = previous_prompt_tokens;
    client.generate(GenerationRequest{messages, turn.output_tokens, true, true}, r, ctx.run_start, ctx.stop);
    ctx.store->append(r);
    if (ctx.progress != nullptr) ctx.progress->request_done(r.ok);
    last_finish = Clock::now();
    if (!r.ok) break;  // the conversation cannot go on without this answer
    previous_prompt_tokens = r.prompt_tokens;
    messages.push_back({{"role", "assistant"}, {"content", r.text.empty() ? std::string("ok") : r.text}});
    if (role == "session" && plan.subagent_every_turns > 0 && (t + 1) % plan.subagent_every_turns == 0 &&
        t + 1 < turns.size()) {
      // The parent waits for its sub-agent, as for a tool call.
      const std::string sub_id = fmt::format("{}/sub{}", session_id, subagent_counter++);
      int64_t unused = 0;
      run_conversation(ctx, spec, client, plan, sub_id, "subagent", messages, plan.subagent_turn_plans,
                       previous_prompt_tokens, Clock::now(), unused);
      last_finish = Clock::now();
    }
  }
  return previous_prompt_tokens;
}

void run_session_plans(RunContext& ctx, const PointSpec& spec, const std::vector<SessionPlan>& plans) {
  if (ctx.progress != nullptr) {
    int64_t total = 0;
    for (const SessionPlan& p : plans) total += static_cast<int64_t>(p.turns.size());
    ctx.progress->set_phase("turns", total);
  }
  ctx.flush_cache();
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> threads;
  for (const SessionPlan& plan : plans) {
    threads.emplace_back([&ctx, &spec, &plan, start] {
      std::shared_ptr<ServerClient> client = ctx.make_client();
      json messages = json::array();
      if (!plan.shared_prefix_ids.empty()) {
        std::string system = "You are an agent with tools.";
        for (uint64_t id : plan.shared_prefix_ids) {
          PointSpec shared = spec;  // same text for the same id in every session
          system +=
              ctx.prompts->text_of_tokens(plan.shared_block_tokens, ctx.seed(shared, "shared_block", int64_t(id)));
        }
        messages.push_back({{"role", "system"}, {"content", system}});
      }
      int64_t subagent_counter = 0;
      run_conversation(ctx, spec, *client, plan, plan.session_id, "session", messages, plan.turns, -1, start,
                       subagent_counter);
    });
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace

void run_sessions(RunContext& ctx, const PointSpec& spec) {
  ctx.store->mark_point_start(spec);
  std::mt19937_64 rng(spec.seed);
  auto uniform_int = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  auto uniform_real = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  auto random_turn = [&](double delay_s) {
    return TurnPlan{uniform_int(spec.tool_tokens_min, spec.tool_tokens_max),
                    uniform_int(spec.output_tokens_min, spec.output_tokens_max), delay_s};
  };
  std::vector<SessionPlan> plans;
  for (int64_t s = 0; s < spec.num_sessions; ++s) {
    SessionPlan plan;
    plan.session_id = fmt::format("s{}", s);
    if (spec.shared_prefix_tokens > 0) {
      plan.shared_prefix_ids = {0};
      plan.shared_block_tokens = spec.shared_prefix_tokens;
    }
    for (int64_t t = 0; t < spec.num_turns; ++t)
      plan.turns.push_back(random_turn(t == 0 ? 0.0 : uniform_real(spec.think_s_min, spec.think_s_max)));
    plan.subagent_every_turns = spec.subagent_every_turns;
    for (int64_t t = 0; t < spec.subagent_turns && spec.subagent_every_turns > 0; ++t)
      plan.subagent_turn_plans.push_back(random_turn(t == 0 ? 0.0 : uniform_real(spec.think_s_min, spec.think_s_max)));
    plans.push_back(std::move(plan));
  }
  run_session_plans(ctx, spec, plans);
  if (ctx.stopping()) return;
  ctx.store->mark_point_end(spec, json::object());
}

void run_trace(RunContext& ctx, const PointSpec& spec) {
  ctx.store->mark_point_start(spec);
  const std::vector<SessionPlan> plans =
      plan_trace_sessions(read_trace_file(spec.trace_path), spec.trace_block_tokens, spec.token_scale);
  run_session_plans(ctx, spec, plans);
  if (ctx.stopping()) return;
  ctx.store->mark_point_end(spec, json::object());
}

json analyze_sessions(const StoredPoint& point) {
  json result = {{"invalid_reasons", json::array()}, {"notes", json::array()}};
  std::vector<RequestRecord> turns;
  for (const RequestRecord& r : point.records)
    if (r.role == "session" || r.role == "subagent") turns.push_back(r);
  // Lengths here are planned, not exact (templates and re-tokenized answers add
  // tokens), so only failures invalidate; output lengths are still checked.
  check_records(turns, false, result);
  result["metrics"] = to_json(load_metrics(turns));
  std::map<int64_t, std::vector<const RequestRecord*>> by_turn;
  std::vector<double> all_reuse;
  for (const RequestRecord& r : turns)
    if (r.role == "session" && r.ok) by_turn[r.turn].push_back(&r);
  json rows = json::array();
  for (const auto& [turn, records] : by_turn) {
    std::vector<double> ttft, cached, reuse, prompt;
    for (const RequestRecord* r : records) {
      ttft.push_back(ttft_ms(*r));
      cached.push_back(static_cast<double>(std::max<int64_t>(r->cached_tokens, 0)));
      prompt.push_back(static_cast<double>(r->prompt_tokens));
      if (r->previous_prompt_tokens > 0 && r->cached_tokens >= 0) {
        reuse.push_back(static_cast<double>(std::min(r->cached_tokens, r->previous_prompt_tokens)) /
                        static_cast<double>(r->previous_prompt_tokens));
        all_reuse.push_back(reuse.back());
      }
    }
    rows.push_back({{"turn", turn},
                    {"num_requests", static_cast<int64_t>(records.size())},
                    {"prompt_tokens_mean", to_json(distribution_of(prompt))["mean"]},
                    {"cached_tokens_mean", to_json(distribution_of(cached))["mean"]},
                    {"reuse_mean", to_json(distribution_of(reuse))["mean"]},
                    {"ttft_ms", to_json(distribution_of(ttft))}});
  }
  std::vector<double> sub_reuse;
  for (const RequestRecord& r : turns)
    if (r.role == "subagent" && r.ok && r.previous_prompt_tokens > 0 && r.cached_tokens >= 0)
      sub_reuse.push_back(static_cast<double>(std::min(r.cached_tokens, r.previous_prompt_tokens)) /
                          static_cast<double>(r.previous_prompt_tokens));
  result["turns"] = rows;
  result["reuse_mean"] = to_json(distribution_of(all_reuse))["mean"];
  result["subagent_reuse_mean"] = to_json(distribution_of(sub_reuse))["mean"];
  result["num_sessions"] = point.spec.kind == "sessions" ? json(point.spec.num_sessions) : json();
  return result;
}

}  // namespace llmesh::bench
