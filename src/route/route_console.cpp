#include "route/route_console.h"

#include <fmt/format.h>

#include "core/host_memory.h"
#include "route/upstream_fetch.h"

namespace llmesh::route {

using nlohmann::json;

namespace {

const char* kind_name(UpstreamKind kind) { return kind == UpstreamKind::llmesh ? "llmesh" : "openai"; }

bool is_llmesh(Router& router, int i) { return router.upstream(i).kind == UpstreamKind::llmesh; }

json nodes_view(const RouteConsoleState& s) {
  const RouterSnapshot snapshot = s.router.snapshot();
  const double now = console::unix_seconds_now();
  const std::string host = host_name();
  int64_t in_flight = 0;
  for (const UpstreamSnapshot& u : snapshot.upstreams) in_flight += u.in_flight;
  json nodes = json::array();
  nodes.push_back({{"id", fmt::format("route@{}:{}", host, s.port)},
                   {"name", host},
                   {"host", host},
                   {"url", nullptr},
                   {"role", "route"},
                   {"kind", "llmesh"},
                   {"state", "up"},
                   {"last_seen", now},
                   {"started_at", s.started_at},
                   {"device", "cpu"},
                   {"kernels", nullptr},
                   {"threads", nullptr},
                   {"models", json::array()},
                   {"requests", {{"running", in_flight}, {"waiting", 0}}},
                   {"memory", {{"rss_bytes", int64_t(resident_memory_bytes())}, {"weights_bytes", nullptr},
                               {"kv_pool", nullptr}, {"host_tier", nullptr}, {"disk_tier", nullptr}}},
                   {"policy", snapshot.policy},
                   {"error", nullptr}});
  // An llmesh upstream describes itself; the router adds how it sees it.
  const std::vector<json> own = fetch_from_upstreams(
      s.router, "/console/api/nodes", [&](int i) { return is_llmesh(s.router, i); }, nullptr);
  for (size_t i = 0; i < snapshot.upstreams.size(); ++i) {
    const UpstreamSnapshot& u = snapshot.upstreams[i];
    json node = {{"id", u.spec->name},
                 {"name", u.spec->name},
                 {"host", u.spec->host},
                 {"url", u.spec->url},
                 {"role", "upstream"},
                 {"kind", kind_name(u.spec->kind)},
                 {"state", u.healthy ? "up" : "down"},
                 {"last_seen", u.healthy ? now : now - u.down_for_s},
                 {"started_at", nullptr},
                 {"device", nullptr},
                 {"kernels", nullptr},
                 {"threads", nullptr},
                 {"models", u.spec->models},
                 {"requests", {{"running", u.in_flight}, {"waiting", 0}}},
                 {"memory", nullptr},
                 {"error", u.healthy || u.last_error.empty() ? json(nullptr) : json(u.last_error)}};
    const json& reported = own[i];
    if (reported.is_object() && reported.contains("nodes") && reported["nodes"].is_array() &&
        !reported["nodes"].empty() && reported["nodes"][0].is_object()) {
      const json& self = reported["nodes"][0];
      for (const char* key : {"host", "started_at", "device", "kernels", "threads", "models", "memory", "requests"})
        if (self.contains(key)) node[key] = self[key];
      if (self.value("state", "") != "up" && u.healthy) node["state"] = self.value("state", "up");
    }
    nodes.push_back(std::move(node));
  }
  return {{"nodes", std::move(nodes)}};
}

json models_view(const RouteConsoleState& s) {
  const RouterSnapshot snapshot = s.router.snapshot();
  const std::vector<json> described = fetch_from_upstreams(
      s.router, "/console/api/models", [&](int i) { return is_llmesh(s.router, i); }, nullptr);
  const std::vector<json> listed = fetch_from_upstreams(
      s.router, "/v1/models", [&](int i) { return !is_llmesh(s.router, i); }, nullptr);
  json loaded = json::array();
  for (size_t i = 0; i < snapshot.upstreams.size(); ++i) {
    const std::string& upstream = snapshot.upstreams[i].spec->name;
    if (described[i].is_object() && described[i].contains("loaded") && described[i]["loaded"].is_array()) {
      for (json m : described[i]["loaded"]) {
        m["node"] = upstream;
        loaded.push_back(std::move(m));
      }
    } else if (listed[i].is_object() && listed[i].contains("data") && listed[i]["data"].is_array()) {
      for (const json& m : listed[i]["data"]) {
        if (m.is_object() && m.contains("id") && m["id"].is_string())
          loaded.push_back({{"name", m["id"]}, {"node", upstream}, {"context_tokens", m.value("max_model_len", json())}});
      }
    }
  }
  return {{"loaded", std::move(loaded)}, {"library", nullptr}};
}

}  // namespace

std::string protocol_of_path(const std::string& path) {
  if (path == "/v1/chat/completions") return "chat";
  if (path == "/v1/completions") return "completions";
  if (path == "/v1/messages") return "messages";
  if (path == "/v1/messages/count_tokens") return "count_tokens";
  if (path == "/v1/responses") return "responses";
  return path;
}

console::ConsoleViews route_console_views(const RouteConsoleState& state) {
  console::ConsoleViews v;
  v.nodes = [state] { return nodes_view(state); };
  v.models = [state] { return models_view(state); };
  v.requests = [state](size_t limit) { return state.requests.list(limit); };
  v.request = [state](const std::string& id) { return state.requests.find(id); };
  return v;  // history: the owner's MetricsHistory
}

json RouteHistorySampler::operator()() {
  const RouterSnapshot snapshot = router_.snapshot();
  const double now = console::unix_seconds_now();
  int64_t prompt = 0, cached = 0, output = 0, in_flight = 0;
  for (const UpstreamSnapshot& u : snapshot.upstreams) {
    prompt += u.prompt_tokens;
    cached += u.cached_tokens;
    output += u.output_tokens;
    in_flight += u.in_flight;
  }
  if (!has_previous_) {  // against zero counters: the first sample holds what ran since the start
    previous_at_ = now - 1.0;
    has_previous_ = true;
  }
  const double dt = std::max(1e-3, now - previous_at_);
  const int64_t d_prompt = prompt - previous_prompt_;
  json sample = {
      {"prompt_tokens_per_s", double(d_prompt) / dt},
      {"output_tokens_per_s", double(output - previous_output_) / dt},
      {"running", in_flight},
      {"waiting", 0},
      {"cache_hit_rate", d_prompt > 0 ? json(double(cached - previous_cached_) / double(d_prompt)) : json(nullptr)},
      {"evictions_per_min", nullptr},
      {"kv_blocks", nullptr},
  };
  previous_prompt_ = prompt, previous_cached_ = cached, previous_output_ = output;
  sample.update(console::recent_ttft_fields(requests_, now));
  previous_at_ = now;
  return sample;
}

}  // namespace llmesh::route
