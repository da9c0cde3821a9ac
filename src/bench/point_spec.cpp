#include "bench/point_spec.h"

#include <fmt/format.h>

#include "core/error.h"

namespace llmesh::bench {

using nlohmann::json;

std::string format_tokens(int64_t n) {
  if (n >= 1024 && n % 1024 == 0) return fmt::format("{}K", n / 1024);
  return std::to_string(n);
}

std::string PointSpec::key() const {
  if (kind == "fixed")
    return fmt::format("fixed isl={} osl={} c={} n={} w={} cache={} seed={}", isl, osl, concurrency, num_requests,
                       num_warmups, cache, seed);
  if (kind == "interference")
    return fmt::format("interference isl={} osl={} c={} n={} inject={}->{}@{}s seed={}", isl, osl, concurrency,
                       num_requests, inject_isl, inject_osl, inject_after_s, seed);
  if (kind == "prefix_ab") return fmt::format("prefix_ab isl={} reps={} seed={}", isl, repetitions, seed);
  if (kind == "needle")
    return fmt::format("needle lengths={} depths={} seed={}", fmt::join(context_lengths, ","), num_depths, seed);
  if (kind == "sessions")
    return fmt::format("sessions n={} turns={} prefix={} tool={}-{} out={}-{} think={}-{} sub={}x{} seed={}",
                       num_sessions, num_turns, shared_prefix_tokens, tool_tokens_min, tool_tokens_max,
                       output_tokens_min, output_tokens_max, think_s_min, think_s_max, subagent_every_turns,
                       subagent_turns, seed);
  if (kind == "soak")
    return fmt::format("soak n={} duration={}s prefix={} tool={}-{} out={}-{} think={}-{} sub={}x{} compact={} seed={}",
                       num_sessions, duration_s, shared_prefix_tokens, tool_tokens_min, tool_tokens_max,
                       output_tokens_min, output_tokens_max, think_s_min, think_s_max, subagent_every_turns,
                       subagent_turns, compact_at_tokens, seed);
  if (kind == "trace")
    return fmt::format("trace path={} block={} scale={} seed={}", trace_path, trace_block_tokens, token_scale, seed);
  fail("unknown point kind '{}'", kind);
}

json to_json(const PointSpec& s) {
  json j = {{"kind", s.kind}, {"name", s.name}, {"seed", s.seed}};
  if (s.kind == "fixed" || s.kind == "interference") {
    j.update({{"isl", s.isl},
              {"osl", s.osl},
              {"concurrency", s.concurrency},
              {"requests", s.num_requests},
              {"warmups", s.num_warmups}});
    if (s.kind == "fixed") j["cache"] = s.cache;
  }
  if (s.kind == "interference")
    j.update({{"inject_isl", s.inject_isl}, {"inject_osl", s.inject_osl}, {"inject_after_s", s.inject_after_s}});
  if (s.kind == "prefix_ab") j.update({{"isl", s.isl}, {"repetitions", s.repetitions}});
  if (s.kind == "needle") j.update({{"context_lengths", s.context_lengths}, {"depths", s.num_depths}});
  if (s.kind == "soak")
    j.update({{"duration_s", s.duration_s}, {"compact_at_tokens", s.compact_at_tokens},
              {"sample_every_s", s.sample_every_s}});
  if (s.kind == "sessions" || s.kind == "soak")
    j.update({{"sessions", s.num_sessions},
              {"turns", s.num_turns},
              {"shared_prefix_tokens", s.shared_prefix_tokens},
              {"tool_tokens_min", s.tool_tokens_min},
              {"tool_tokens_max", s.tool_tokens_max},
              {"output_tokens_min", s.output_tokens_min},
              {"output_tokens_max", s.output_tokens_max},
              {"think_s_min", s.think_s_min},
              {"think_s_max", s.think_s_max},
              {"subagent_every_turns", s.subagent_every_turns},
              {"subagent_turns", s.subagent_turns}});
  if (s.kind == "trace")
    j.update({{"trace", s.trace_path}, {"trace_block_tokens", s.trace_block_tokens}, {"token_scale", s.token_scale}});
  return j;
}

PointSpec point_spec_from_json(const json& j) {
  check(j.is_object(), "a point must be an object, got {}", j.dump());
  PointSpec s;
  auto get_int = [&](const char* key, int64_t& out, int64_t min_value) {
    if (!j.contains(key)) return;
    check(j[key].is_number_integer(), "point field '{}' must be an integer", key);
    out = j[key].get<int64_t>();
    check(out >= min_value, "point field '{}' must be >= {} (got {})", key, min_value, out);
  };
  auto get_double = [&](const char* key, double& out) {
    if (!j.contains(key)) return;
    check(j[key].is_number() && j[key].get<double>() >= 0, "point field '{}' must be a number >= 0", key);
    out = j[key].get<double>();
  };
  auto get_string = [&](const char* key, std::string& out) {
    if (!j.contains(key)) return;
    check(j[key].is_string(), "point field '{}' must be a string", key);
    out = j[key].get<std::string>();
  };
  static const char* const known[] = {"kind",
                                      "name",
                                      "seed",
                                      "isl",
                                      "osl",
                                      "concurrency",
                                      "requests",
                                      "warmups",
                                      "cache",
                                      "inject_isl",
                                      "inject_osl",
                                      "inject_after_s",
                                      "repetitions",
                                      "context_lengths",
                                      "depths",
                                      "sessions",
                                      "turns",
                                      "shared_prefix_tokens",
                                      "tool_tokens_min",
                                      "tool_tokens_max",
                                      "output_tokens_min",
                                      "output_tokens_max",
                                      "think_s_min",
                                      "think_s_max",
                                      "subagent_every_turns",
                                      "subagent_turns",
                                      "trace",
                                      "trace_block_tokens",
                                      "token_scale",
                                      "duration_s",
                                      "compact_at_tokens",
                                      "sample_every_s"};
  for (const auto& [key, value] : j.items()) {
    bool found = false;
    for (const char* k : known) found = found || key == k;
    check(found, "unknown point field '{}'", key);
  }
  get_string("kind", s.kind);
  get_string("name", s.name);
  int64_t seed = 1;
  get_int("seed", seed, 0);
  s.seed = static_cast<uint64_t>(seed);
  get_int("isl", s.isl, 1);
  get_int("osl", s.osl, 1);
  get_int("concurrency", s.concurrency, 1);
  get_int("requests", s.num_requests, 1);
  get_int("warmups", s.num_warmups, 0);
  get_string("cache", s.cache);
  check(s.cache == "cold" || s.cache == "warm", "point field 'cache' must be \"cold\" or \"warm\"");
  get_int("inject_isl", s.inject_isl, 1);
  get_int("inject_osl", s.inject_osl, 1);
  get_double("inject_after_s", s.inject_after_s);
  get_int("repetitions", s.repetitions, 1);
  if (j.contains("context_lengths")) {
    check(j["context_lengths"].is_array(), "point field 'context_lengths' must be a list of integers");
    s.context_lengths = j["context_lengths"].get<std::vector<int64_t>>();
  }
  get_int("depths", s.num_depths, 1);
  get_int("sessions", s.num_sessions, 1);
  get_int("turns", s.num_turns, 1);
  get_int("shared_prefix_tokens", s.shared_prefix_tokens, 0);
  get_int("tool_tokens_min", s.tool_tokens_min, 1);
  get_int("tool_tokens_max", s.tool_tokens_max, 1);
  get_int("output_tokens_min", s.output_tokens_min, 1);
  get_int("output_tokens_max", s.output_tokens_max, 1);
  get_double("think_s_min", s.think_s_min);
  get_double("think_s_max", s.think_s_max);
  get_int("subagent_every_turns", s.subagent_every_turns, 0);
  get_int("subagent_turns", s.subagent_turns, 1);
  get_string("trace", s.trace_path);
  get_int("trace_block_tokens", s.trace_block_tokens, 1);
  get_double("token_scale", s.token_scale);
  get_double("duration_s", s.duration_s);
  get_int("compact_at_tokens", s.compact_at_tokens, 1);
  get_double("sample_every_s", s.sample_every_s);
  check(s.sample_every_s > 0, "point field 'sample_every_s' must be > 0");
  check(s.tool_tokens_min <= s.tool_tokens_max && s.output_tokens_min <= s.output_tokens_max &&
            s.think_s_min <= s.think_s_max,
        "point '{}': a *_min is above its *_max", s.name);
  if (s.kind == "trace") check(!s.trace_path.empty(), "a trace point needs 'trace' (a JSONL file)");
  if (s.kind == "needle" && s.context_lengths.empty()) s.context_lengths = {1024, 4096};
  (void)s.key();  // rejects unknown kinds
  return s;
}

}  // namespace llmesh::bench
