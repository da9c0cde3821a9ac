#include "route/route_views.h"

#include <fmt/format.h>

namespace llmesh::route {

using nlohmann::json;

namespace {

std::string label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string upstream_label(const UpstreamSnapshot& u) { return "upstream=\"" + label_value(u.spec->name) + "\""; }

double ratio(int64_t part, int64_t whole) { return whole > 0 ? double(part) / double(whole) : 0.0; }

// One metric family: # HELP, # TYPE, then one sample per upstream.
template <typename Value>
void per_upstream(std::string& out, const RouterSnapshot& s, const char* name, const char* type, const char* help,
                  Value value) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  for (const UpstreamSnapshot& u : s.upstreams) out += fmt::format("{}{{{}}} {}\n", name, upstream_label(u), value(u));
}

}  // namespace

std::string render_route_metrics(const RouterSnapshot& s) {
  std::string out;
  per_upstream(out, s, "llmesh:route_upstream_up", "gauge", "1 while the upstream passes health checks",
               [](const UpstreamSnapshot& u) { return u.healthy ? 1 : 0; });
  per_upstream(out, s, "llmesh:route_requests_in_flight", "gauge", "Requests routed to the upstream and not finished",
               [](const UpstreamSnapshot& u) { return u.in_flight; });
  per_upstream(out, s, "llmesh:route_requests_in_flight_max", "gauge", "The most requests in flight at once",
               [](const UpstreamSnapshot& u) { return u.max_in_flight; });
  per_upstream(out, s, "llmesh:route_requests_total", "counter", "Requests finished (retried attempts excluded)",
               [](const UpstreamSnapshot& u) { return u.num_requests; });
  per_upstream(out, s, "llmesh:route_request_errors_total", "counter",
               "Failed connections or reads, and 5xx/429 answers",
               [](const UpstreamSnapshot& u) { return u.num_errors; });
  per_upstream(out, s, "llmesh:route_retries_total", "counter",
               "Attempts given up for another upstream before any byte reached the client",
               [](const UpstreamSnapshot& u) { return u.num_retries; });
  per_upstream(out, s, "llmesh:route_prompt_tokens_total", "counter", "Prompt tokens the upstream reported",
               [](const UpstreamSnapshot& u) { return u.prompt_tokens; });
  per_upstream(out, s, "llmesh:route_cached_tokens_total", "counter", "Prompt tokens the upstream served from cache",
               [](const UpstreamSnapshot& u) { return u.cached_tokens; });
  per_upstream(out, s, "llmesh:route_output_tokens_total", "counter", "Output tokens the upstream reported",
               [](const UpstreamSnapshot& u) { return u.output_tokens; });
  per_upstream(out, s, "llmesh:route_cache_hit_ratio", "gauge", "Cached over prompt tokens, as the upstream reported",
               [](const UpstreamSnapshot& u) { return ratio(u.cached_tokens, u.prompt_tokens); });
  per_upstream(out, s, "llmesh:route_sessions", "gauge", "Sessions whose affinity points to the upstream",
               [](const UpstreamSnapshot& u) { return u.num_sessions; });
  const char* ttft = "llmesh:route_time_to_first_token_seconds";
  out += fmt::format("# HELP {} Time to the first output, measured at the router\n# TYPE {} histogram\n", ttft, ttft);
  for (const UpstreamSnapshot& u : s.upstreams) u.ttft->render_samples(out, ttft, upstream_label(u));
  const char* decisions = "llmesh:route_decisions_total";
  out += fmt::format("# HELP {} Routing decisions by reason\n# TYPE {} counter\n", decisions, decisions);
  for (int r = 0; r < kNumDecisionReasons; ++r) {
    if (s.decisions[size_t(r)] == 0 && DecisionReason(r) != DecisionReason::none) continue;
    out += fmt::format("{}{{policy=\"{}\",reason=\"{}\"}} {}\n", decisions, s.policy,
                       decision_reason_name(DecisionReason(r)), s.decisions[size_t(r)]);
  }
  out += fmt::format(
      "# HELP llmesh:route_requests_refused_total Requests no upstream could take\n"
      "# TYPE llmesh:route_requests_refused_total counter\nllmesh:route_requests_refused_total {}\n",
      s.num_refused);
  return out;
}

json route_state_json(const RouterSnapshot& s) {
  json upstreams = json::array();
  for (const UpstreamSnapshot& u : s.upstreams) {
    const int64_t num_ttft = u.ttft->count();
    upstreams.push_back({{"name", u.spec->name},
                         {"url", u.spec->url},
                         {"kind", upstream_kind_name(u.spec->kind)},
                         {"weight", u.spec->weight},
                         {"max_concurrent", u.spec->max_concurrent},
                         {"models", u.spec->models},
                         {"healthy", u.healthy},
                         {"in_flight", u.in_flight},
                         {"max_in_flight", u.max_in_flight},
                         {"requests", u.num_requests},
                         {"errors", u.num_errors},
                         {"retries", u.num_retries},
                         {"prompt_tokens", u.prompt_tokens},
                         {"cached_tokens", u.cached_tokens},
                         {"output_tokens", u.output_tokens},
                         {"cache_hit_ratio", ratio(u.cached_tokens, u.prompt_tokens)},
                         {"sessions", u.num_sessions},
                         {"ttft_mean_ms", num_ttft > 0 ? 1000.0 * u.ttft->sum() / double(num_ttft) : 0.0},
                         {"down_for_s", u.down_for_s},
                         {"next_check_in_s", u.next_check_in_s},
                         {"consecutive_failures", u.num_consecutive_failures},
                         {"last_error", u.last_error}});
  }
  json decisions = json::object();
  for (int r = 0; r < kNumDecisionReasons; ++r)
    if (s.decisions[size_t(r)] > 0) decisions[std::string(decision_reason_name(DecisionReason(r)))] = s.decisions[size_t(r)];
  return {{"object", "route.state"},
          {"policy", s.policy},
          {"load_factor", s.load_factor},
          {"num_sessions", s.num_sessions},
          {"num_refused", s.num_refused},
          {"decisions", decisions},
          {"upstreams", upstreams}};
}

}  // namespace llmesh::route
