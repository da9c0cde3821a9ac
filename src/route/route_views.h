// The router's state as others read it: Prometheus text for /metrics and the
// JSON of GET /v1/route (what the console shows). Both are rendered from one
// RouterSnapshot, so they never disagree.
//
// /metrics, labels upstream="name" unless noted:
//   llmesh:route_upstream_up                    1 healthy, 0 down
//   llmesh:route_requests_in_flight             gauge
//   llmesh:route_requests_in_flight_max         the most it ever held at once
//   llmesh:route_requests_total                 finished requests (a retried attempt is not one)
//   llmesh:route_request_errors_total           failed connections/reads, 5xx and 429 answers
//   llmesh:route_retries_total                  attempts given up for another upstream before any byte
//   llmesh:route_prompt_tokens_total / _cached_tokens_total / _output_tokens_total   from upstream usage
//   llmesh:route_cache_hit_ratio                cached / prompt tokens
//   llmesh:route_sessions                       sessions whose affinity points here
//   llmesh:route_time_to_first_token_seconds    histogram, measured at the router
//   llmesh:route_decisions_total{policy,reason} routing decisions by reason
//   llmesh:route_requests_refused_total         no upstream was eligible with room
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "route/router.h"

namespace llmesh::route {

std::string render_route_metrics(const RouterSnapshot& snapshot);

// {policy, load_factor, num_sessions, num_refused, decisions: {reason: n},
//  upstreams: [{name, url, kind, weight, max_concurrent, models, healthy, in_flight, max_in_flight,
//               requests, errors, retries, prompt_tokens, cached_tokens, output_tokens, cache_hit_ratio,
//               sessions, ttft_mean_ms, down_for_s, next_check_in_s, consecutive_failures, last_error}]}
nlohmann::json route_state_json(const RouterSnapshot& snapshot);

}  // namespace llmesh::route
