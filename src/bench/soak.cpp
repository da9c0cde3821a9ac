// The soak (`--mode soak`): Claude-Code-shaped agent sessions against a
// server for a duration, to find what only hours of traffic show — errors,
// leaks, cache reuse that decays, latency that creeps.
//
// Each of N sessions loops until the deadline:
//   turn:       the whole conversation + a tool result of tool_tokens_min..max
//               tokens ending in a <system-reminder>, then think time;
//   sub-agents: after every k-th turn two sub-agents run in parallel (their
//               own conversations on the shared system prefix, subagent_turns
//               turns each); the parent waits for both, as for a Task tool;
//   compaction: once a prompt passes compact_at_tokens, the session asks for
//               a summary and starts over from system + summary, as Claude
//               Code's auto-compact does.
// A sampler reads the server's /metrics every sample_every_s: RSS
// (process_resident_memory_bytes), KV blocks held by requests, queue depths.
// After the deadline the soak waits for the server to go idle and samples
// once more: held KV blocks must be back at the baseline taken before start.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "bench/analysis.h"
#include "bench/run_context.h"
#include "bench/stats.h"
#include "core/error.h"

namespace llmesh::bench {

using nlohmann::json;

namespace {

// The first sample of each metric in a Prometheus text exposition, by name
// (labels ignored), and every sample by its whole series ("name{labels}").
std::map<std::string, double> parse_metrics(const std::string& text) {
  std::map<std::string, double> values;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty() || line[0] == '#') continue;
    const size_t name_end = line.find_first_of("{ ");
    const size_t value_start = line.rfind(' ');
    if (name_end == std::string::npos || value_start == std::string::npos) continue;
    const std::string name = line.substr(0, name_end);
    try {
      const double value = std::stod(line.substr(value_start + 1));
      values.try_emplace(name, value);
      values[line.substr(0, value_start)] = value;
    } catch (const std::exception&) {
    }
  }
  return values;
}

json sample_server(ServerClient& client, double t_s) {
  const std::map<std::string, double> m = parse_metrics(client.metrics_text());
  auto get = [&](const char* name) { return m.count(name) ? json(m.at(name)) : json(); };
  // llmesh's host KV tier is memory the server is meant to fill (up to --kv-host-gib):
  // RSS minus it is what a leak would show in.
  json host_tier_bytes;
  for (const auto& [series, value] : m)
    if (series.starts_with("llmesh:kv_tier_bytes{") && series.find("tier=\"host\"") != std::string::npos)
      host_tier_bytes = value;
  return {{"t_s", t_s},
          {"rss_bytes", get("process_resident_memory_bytes")},
          {"host_tier_bytes", host_tier_bytes},
          {"kv_blocks_used", get("llmesh:kv_cache_blocks_used")},
          {"kv_blocks_cached", get("llmesh:kv_cache_blocks_cached")},
          {"running", get("llmesh:num_requests_running")},
          {"waiting", get("llmesh:num_requests_waiting")}};
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

class Soak {
 public:
  Soak(RunContext& ctx, const PointSpec& spec) : ctx_(ctx), spec_(spec), rng_(spec.seed) {
    compact_at_tokens_ = spec.compact_at_tokens;
    // Compact before the server's context is full, as a client that knows the window does.
    if (ctx.context_limit > 0) compact_at_tokens_ = std::min(compact_at_tokens_, ctx.context_limit * 7 / 10);
  }

  json run() {
    std::shared_ptr<ServerClient> sampler_client = ctx_.make_client();
    const json baseline = sample_server(*sampler_client, 0);
    start_ = Clock::now();
    deadline_ = start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(spec_.duration_s));
    std::vector<json> samples{baseline};
    std::mutex samples_mutex;
    std::atomic<bool> sessions_done{false};
    std::thread sampler([&] {
      auto next = Clock::now();
      while (!sessions_done.load() && !ctx_.stopping()) {
        next += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(spec_.sample_every_s));
        while (Clock::now() < next && !sessions_done.load() && !ctx_.stopping())
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        json s = sample_server(*sampler_client, seconds_since(start_));
        std::lock_guard lock(samples_mutex);
        samples.push_back(std::move(s));
      }
    });
    std::vector<std::thread> sessions;
    for (int64_t i = 0; i < spec_.num_sessions; ++i) sessions.emplace_back([this, i] { run_session(i); });
    for (std::thread& t : sessions) t.join();
    sessions_done.store(true);
    sampler.join();

    // Idle: nothing running or waiting (a few seconds at most once clients are gone).
    json idle;
    for (int i = 0; i < 120 && !ctx_.stopping(); ++i) {
      idle = sample_server(*sampler_client, seconds_since(start_));
      if (idle["running"] == 0.0 && idle["waiting"] == 0.0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return {{"samples", samples},
            {"start_s", std::chrono::duration<double>(start_ - ctx_.run_start).count()},
            {"baseline", baseline},
            {"idle", idle},
            {"num_compactions", num_compactions_.load()},
            {"num_retries", num_retries_.load()},
            {"compact_at_tokens", compact_at_tokens_}};
  }

 private:
  bool over() const { return ctx_.stopping() || Clock::now() >= deadline_; }

  int64_t uniform(int64_t lo, int64_t hi) {
    std::lock_guard lock(rng_mutex_);
    return std::uniform_int_distribution<int64_t>(lo, std::max(lo, hi))(rng_);
  }
  void think() {
    std::unique_lock lock(rng_mutex_);
    const double s = std::uniform_real_distribution<double>(spec_.think_s_min, std::max(spec_.think_s_min,
                                                                                           spec_.think_s_max))(rng_);
    lock.unlock();
    const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
    while (Clock::now() < until && !over()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  std::string text(int64_t tokens, const std::string& what, int64_t index) const {
    return ctx_.prompts->text_of_tokens(std::max<int64_t>(1, tokens), ctx_.seed(spec_, what, index));
  }

  json system_messages() const {
    // The same text in every session: the prefix all of them share.
    return json::array({{{"role", "system"},
                         {"content", "You are a coding agent with tools. " +
                                         ctx_.prompts->text_of_tokens(spec_.shared_prefix_tokens,
                                                                      ctx_.seed(spec_, "shared_prefix", 0))}}});
  }

  // One request of a conversation; appends the answer on success. Failed
  // turns are recorded and retried after a pause (an agent does not give up).
  bool turn(ServerClient& client, json& messages, const std::string& session_id, const std::string& role,
            int64_t turn_index, int64_t& previous_prompt_tokens, int64_t output_tokens) {
    for (int attempt = 0; attempt < 3 && !ctx_.stopping(); ++attempt) {
      RequestRecord r;
      r.point_key = spec_.key();
      r.role = role;
      r.index = request_counter_++;
      r.session_id = session_id;
      r.turn = turn_index;
      r.previous_prompt_tokens = previous_prompt_tokens;
      client.generate(GenerationRequest{messages, output_tokens, false, true}, r, ctx_.run_start, ctx_.stop);
      ctx_.store->append(r);
      if (ctx_.progress != nullptr) ctx_.progress->request_done(r.ok);
      if (r.ok) {
        previous_prompt_tokens = r.prompt_tokens;
        messages.push_back({{"role", "assistant"}, {"content", r.text.empty() ? std::string("ok") : r.text}});
        return true;
      }
      if (r.cancelled) return false;
      num_retries_++;
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    return false;
  }

  void run_subagent(const std::string& id, int64_t seed_index) {
    std::shared_ptr<ServerClient> client = ctx_.make_client();
    json messages = system_messages();
    int64_t previous = -1;
    for (int64_t t = 0; t < spec_.subagent_turns && !over(); ++t) {
      const int64_t n = uniform(spec_.tool_tokens_min / 2, spec_.tool_tokens_max / 2);
      messages.push_back({{"role", "user"}, {"content", (t == 0 ? "Sub-task: " : "Tool output:\n") +
                                                            text(n, id, seed_index * 100 + t)}});
      if (!turn(*client, messages, id, "subagent", t, previous,
                uniform(spec_.output_tokens_min, spec_.output_tokens_max)))
        return;
      think();
    }
  }

  void run_session(int64_t session_index) {
    std::shared_ptr<ServerClient> client = ctx_.make_client();
    const std::string session_id = fmt::format("s{}", session_index);
    json messages = system_messages();
    int64_t previous = -1, num_subagents = 0;
    for (int64_t t = 0; !over(); ++t) {
      const int64_t n = uniform(spec_.tool_tokens_min, spec_.tool_tokens_max);
      const int64_t seed_index = session_index * 1000000 + t;
      messages.push_back(
          {{"role", "user"},
           {"content", (t == 0 ? "Task: " : "Tool output:\n") + text(n, "tool", seed_index) +
                           "\n<system-reminder>" + text(48, "reminder", seed_index) + "</system-reminder>"}});
      if (!turn(*client, messages, session_id, "session", t, previous,
                uniform(spec_.output_tokens_min, spec_.output_tokens_max))) {
        if (ctx_.stopping()) return;
        messages = system_messages();  // three failures in a row: start a fresh conversation
        previous = -1;
        continue;
      }
      if (previous > compact_at_tokens_ && !over()) {
        // Auto-compact: ask for a summary of everything, then carry on from it alone.
        messages.push_back({{"role", "user"}, {"content", "Summarize the conversation so far for a fresh context."}});
        int64_t ignored = previous;
        if (!turn(*client, messages, session_id, "compaction", t, ignored, spec_.output_tokens_max)) continue;
        const std::string summary = messages.back()["content"];
        messages = system_messages();
        messages.push_back({{"role", "user"}, {"content", "Summary of the work so far:\n" + summary}});
        messages.push_back({{"role", "assistant"}, {"content", "Understood. Continuing."}});
        previous = -1;
        num_compactions_++;
      }
      if (spec_.subagent_every_turns > 0 && (t + 1) % spec_.subagent_every_turns == 0 && !over()) {
        std::thread a([&, k = num_subagents] { run_subagent(fmt::format("{}/sub{}", session_id, k), k); });
        std::thread b([&, k = num_subagents + 1] { run_subagent(fmt::format("{}/sub{}", session_id, k), k); });
        a.join();
        b.join();
        num_subagents += 2;
      }
      think();
    }
  }

  RunContext& ctx_;
  const PointSpec& spec_;
  int64_t compact_at_tokens_ = 0;
  Clock::time_point start_, deadline_;
  std::mutex rng_mutex_;
  std::mt19937_64 rng_;
  std::atomic<int64_t> request_counter_{0}, num_compactions_{0}, num_retries_{0};
};

// Least-squares slope of y over x (NaN with fewer than 3 points).
double slope(const std::vector<double>& xs, const std::vector<double>& ys) {
  const size_t n = xs.size();
  if (n < 3) return NAN;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) mx += xs[i], my += ys[i];
  mx /= double(n), my /= double(n);
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < n; ++i) sxy += (xs[i] - mx) * (ys[i] - my), sxx += (xs[i] - mx) * (xs[i] - mx);
  return sxx > 0 ? sxy / sxx : NAN;
}

double nan_if_null(const json& v) { return v.is_number() ? v.get<double>() : NAN; }

}  // namespace

void run_soak(RunContext& ctx, const PointSpec& spec) {
  ctx.store->mark_point_start(spec);
  if (ctx.progress != nullptr) ctx.progress->set_phase("soak requests", 0);
  Soak soak(ctx, spec);
  const json info = soak.run();
  if (ctx.stopping()) return;
  ctx.store->mark_point_end(spec, info);
}

json analyze_soak(const StoredPoint& point) {
  json result = {{"invalid_reasons", json::array()}, {"notes", json::array()}};
  std::vector<RequestRecord> records;
  for (const RequestRecord& r : point.records)
    if (!r.cancelled) records.push_back(r);
  result["metrics"] = to_json(load_metrics(records));

  // Errors by kind: the HTTP status, or the client's reason when none came.
  std::map<std::string, int64_t> errors;
  for (const RequestRecord& r : records)
    if (!r.ok) errors[r.http_status != 0 ? fmt::format("HTTP {}", r.http_status) : r.error.substr(0, 60)]++;
  int64_t num_errors = 0;
  for (const auto& [kind, n] : errors) num_errors += n;
  result["num_errors"] = num_errors;
  result["errors_by_kind"] = errors;
  if (num_errors > 0) result["invalid_reasons"].push_back(fmt::format("{} failed requests", num_errors));

  // Reuse of each turn against the same conversation's previous prompt.
  std::vector<double> reuse;
  for (const RequestRecord& r : records)
    if (r.ok && r.role != "compaction" && r.previous_prompt_tokens > 0 && r.cached_tokens >= 0)
      reuse.push_back(double(std::min(r.cached_tokens, r.previous_prompt_tokens)) / double(r.previous_prompt_tokens));
  std::sort(reuse.begin(), reuse.end());
  result["reuse"] = {{"count", int64_t(reuse.size())},
                     {"worst", reuse.empty() ? json() : json(reuse.front())},
                     {"p5", reuse.empty() ? json() : json(percentile(reuse, 5))},
                     {"median", reuse.empty() ? json() : json(percentile(reuse, 50))}};

  // Latency over time: the soak cut into windows by send time (the last one
  // also takes the turns sent as the deadline passed).
  const double duration_s = point.spec.duration_s;
  const double start_s = point.end_info.value("start_s", 0.0);  // the soak's start in the run's clock
  const int num_windows = int(std::clamp(duration_s / 600.0, 4.0, 12.0));
  json windows = json::array();
  for (int w = 0; w < num_windows; ++w) {
    const double lo = duration_s * w / num_windows, hi = duration_s * (w + 1) / num_windows;
    std::vector<double> ttft, tpot;
    int64_t n = 0;
    for (const RequestRecord& r : records) {
      const double t = r.send_s - start_s;
      if (t < lo || (t >= hi && w + 1 < num_windows) || !r.ok) continue;
      ++n;
      if (!std::isnan(ttft_ms(r))) ttft.push_back(ttft_ms(r));
      if (!std::isnan(tpot_ms(r))) tpot.push_back(tpot_ms(r));
    }
    windows.push_back({{"from_s", lo}, {"to_s", hi}, {"num_ok", n},
                       {"ttft_ms", to_json(distribution_of(ttft))}, {"tpot_ms", to_json(distribution_of(tpot))}});
  }
  result["windows"] = windows;

  // Server memory: RSS over time, its slope after the first tenth (warm-up: caches filling).
  const json& info = point.end_info;
  std::vector<double> xs, ys, excl_xs, excl_ys;
  json samples = json::array();
  if (info.contains("samples")) {
    for (const json& s : info["samples"]) {
      samples.push_back(s);
      const double t = nan_if_null(s["t_s"]), rss = nan_if_null(s["rss_bytes"]);
      if (std::isnan(rss) || t < duration_s / 10) continue;
      xs.push_back(t / 3600.0);
      ys.push_back(rss / double(1 << 20));
      const double host = s.contains("host_tier_bytes") ? nan_if_null(s["host_tier_bytes"]) : NAN;
      if (std::isnan(host)) continue;
      excl_xs.push_back(t / 3600.0);
      excl_ys.push_back((rss - host) / double(1 << 20));
    }
  }
  result["samples"] = samples;
  result["rss_mib_first"] = ys.empty() ? json() : json(ys.front());
  result["rss_mib_last"] = ys.empty() ? json() : json(ys.back());
  const double rss_slope = slope(xs, ys);
  result["rss_slope_mib_per_hour"] = std::isnan(rss_slope) ? json() : json(rss_slope);
  const double excl_slope = slope(excl_xs, excl_ys);
  result["rss_without_host_tier_mib_first"] = excl_ys.empty() ? json() : json(excl_ys.front());
  result["rss_without_host_tier_mib_last"] = excl_ys.empty() ? json() : json(excl_ys.back());
  result["rss_without_host_tier_slope_mib_per_hour"] = std::isnan(excl_slope) ? json() : json(excl_slope);
  if (ys.empty()) result["notes"].push_back("the server's /metrics has no process_resident_memory_bytes");

  // Leak check: KV blocks held by requests once idle, against before the start.
  const double baseline = info.contains("baseline") ? nan_if_null(info["baseline"]["kv_blocks_used"]) : NAN;
  const double idle = info.contains("idle") ? nan_if_null(info["idle"]["kv_blocks_used"]) : NAN;
  result["kv_blocks_used_baseline"] = std::isnan(baseline) ? json() : json(baseline);
  result["kv_blocks_used_idle"] = std::isnan(idle) ? json() : json(idle);
  if (!std::isnan(idle) && !std::isnan(baseline) && idle > baseline)
    result["invalid_reasons"].push_back(fmt::format("{} KV blocks still held when idle (baseline {})", idle, baseline));
  result["num_compactions"] = info.value("num_compactions", int64_t(0));
  result["num_retries"] = info.value("num_retries", int64_t(0));
  return result;
}

}  // namespace llmesh::bench
