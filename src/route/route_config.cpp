#include "route/route_config.h"

#include <toml++/toml.h>

#include <algorithm>

#include "core/error.h"

namespace llmesh::route {

using nlohmann::json;

namespace {

json toml_to_json(const toml::node& node, const std::string& where) {
  if (const auto* t = node.as_table()) {
    json j = json::object();
    for (const auto& [k, v] : *t) j[std::string(k.str())] = toml_to_json(v, where);
    return j;
  }
  if (const auto* a = node.as_array()) {
    json j = json::array();
    for (const auto& v : *a) j.push_back(toml_to_json(v, where));
    return j;
  }
  if (auto v = node.value_exact<int64_t>()) return *v;
  if (auto v = node.value_exact<double>()) return *v;
  if (auto v = node.value_exact<bool>()) return *v;
  if (auto v = node.value_exact<std::string>()) return *v;
  fail("{}: unsupported TOML value (dates and times are not settings here)", where);
}

// Typed reads of one section's keys; every key must be consumed.
class Section {
 public:
  Section(const json& table, std::string where) : table_(table), where_(std::move(where)) {
    check(table.is_object(), "{}: expected a table", where_);
  }
  void string(const char* key, std::string& out) {
    if (const json* v = take(key)) {
      check(v->is_string(), "{}: {} must be a string", where_, key);
      out = v->get<std::string>();
    }
  }
  void integer(const char* key, int64_t& out) {
    if (const json* v = take(key)) {
      check(v->is_number_integer(), "{}: {} must be an integer", where_, key);
      out = v->get<int64_t>();
    }
  }
  void integer(const char* key, int& out) {
    int64_t value = out;
    integer(key, value);
    out = int(value);
  }
  void size(const char* key, size_t& out) {
    int64_t value = int64_t(out);
    integer(key, value);
    check(value >= 0, "{}: {}={} must be >= 0", where_, key, value);
    out = size_t(value);
  }
  void number(const char* key, double& out) {
    if (const json* v = take(key)) {
      check(v->is_number(), "{}: {} must be a number", where_, key);
      out = v->get<double>();
    }
  }
  void boolean(const char* key, bool& out) {
    if (const json* v = take(key)) {
      check(v->is_boolean(), "{}: {} must be true or false", where_, key);
      out = v->get<bool>();
    }
  }
  // Error naming the first key nobody read.
  void done(const char* known) const {
    for (const auto& [key, value] : table_.items())
      check(std::find(used_.begin(), used_.end(), key) != used_.end(), "{}: unknown key '{}' (known: {})", where_, key,
            known);
  }

 private:
  const json* take(const char* key) {
    auto it = table_.find(key);
    if (it == table_.end()) return nullptr;
    used_.push_back(key);
    return &*it;
  }
  const json& table_;
  std::string where_;
  std::vector<std::string> used_;
};

}  // namespace

void load_route_config(const std::string& path, RouteConfig& config) {
  toml::table table;
  try {
    table = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    fail("{}: {} (line {})", path, e.description(), e.source().begin.line);
  }
  const json doc = toml_to_json(table, path);
  for (const auto& [key, value] : doc.items()) {
    if (key == "server") {
      Section s(value, path + ": [server]");
      s.string("host", config.host);
      s.integer("port", config.port);
      s.string("api_key", config.api_key);
      s.integer("http_threads", config.num_http_threads);
      s.done("host, port, api_key, http_threads");
    } else if (key == "policy") {
      Section s(value, path + ": [policy]");
      s.string("name", config.policy);
      s.number("load_factor", config.policy_options.load_factor);
      s.integer("vnodes_per_weight", config.policy_options.vnodes_per_weight);
      s.integer("max_sessions", config.policy_options.max_sessions);
      s.size("cache_block_bytes", config.cache_block_bytes);
      s.integer("min_match_blocks", config.policy_options.min_match_blocks);
      s.integer("history_blocks", config.policy_options.history_blocks);
      s.size("session_prefix_bytes", config.session_prefix_bytes);
      s.done("name, load_factor, vnodes_per_weight, max_sessions, cache_block_bytes, min_match_blocks, "
             "history_blocks, session_prefix_bytes");
    } else if (key == "health") {
      Section s(value, path + ": [health]");
      s.integer("interval_ms", config.health.interval_ms);
      s.integer("timeout_ms", config.health.timeout_ms);
      s.integer("max_backoff_ms", config.health.max_backoff_ms);
      s.done("interval_ms, timeout_ms, max_backoff_ms");
    } else if (key == "log") {
      Section s(value, path + ": [log]");
      s.string("requests", config.log_requests_path);
      s.boolean("prompts", config.log_prompts);
      s.done("requests, prompts");
    } else if (key == "upstream") {
      check(value.is_array(), "{}: upstreams go in [[upstream]] tables (an array of tables)", path);
      for (size_t i = 0; i < value.size(); ++i)
        config.upstreams.push_back(upstream_from_json(value[i], fmt::format("{}: upstream {}", path, i + 1)));
    } else {
      fail("{}: unknown section '{}' (known: server, policy, health, log, upstream)", path, key);
    }
  }
}

void check_route_config(const RouteConfig& c) {
  check(c.port >= 0 && c.port < 65536, "port={} must be in 0..65535", c.port);
  check(c.num_http_threads >= 4, "http_threads={} must be >= 4", c.num_http_threads);
  check(c.policy_options.load_factor >= 1.0, "load_factor={} must be >= 1", c.policy_options.load_factor);
  check(c.policy_options.vnodes_per_weight >= 1, "vnodes_per_weight={} must be >= 1", c.policy_options.vnodes_per_weight);
  check(c.policy_options.max_sessions >= 1, "max_sessions={} must be >= 1", c.policy_options.max_sessions);
  check(c.cache_block_bytes >= 16, "cache_block_bytes={} must be >= 16", c.cache_block_bytes);
  check(c.policy_options.min_match_blocks >= 1, "min_match_blocks={} must be >= 1", c.policy_options.min_match_blocks);
  check(c.policy_options.history_blocks >= 1, "history_blocks={} must be >= 1", c.policy_options.history_blocks);
  check(c.session_prefix_bytes >= 64, "session_prefix_bytes={} must be >= 64", c.session_prefix_bytes);
  check(c.health.interval_ms >= 10, "health interval_ms={} must be >= 10", c.health.interval_ms);
  check(c.health.timeout_ms >= 10, "health timeout_ms={} must be >= 10", c.health.timeout_ms);
  check(c.health.max_backoff_ms >= c.health.interval_ms, "health max_backoff_ms={} must be >= interval_ms={}",
        c.health.max_backoff_ms, c.health.interval_ms);
  check_upstream_specs(c.upstreams);
}

}  // namespace llmesh::route
