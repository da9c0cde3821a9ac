// Everything `llmesh route` is configured with: the listening side, the
// policy, health checking, logging and the upstreams. Built from route.toml
// (load_route_config) and then overridden by command-line flags.
//
//   [server]   host, port, api_key, http_threads
//   [policy]   name, load_factor, vnodes_per_weight, max_sessions,
//              cache_block_bytes, min_match_blocks, history_blocks, session_prefix_bytes
//   [health]   interval_ms, timeout_ms, max_backoff_ms
//   [log]      requests (a file), prompts (bool)
//   [[upstream]] url, name, weight, max_concurrent, kind, api_key, models
//
// Unknown sections or keys are errors naming the file and the key, so a typo
// never silently falls back to a default.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "route/routing_policy.h"
#include "route/upstream_spec.h"

namespace llmesh::route {

struct HealthOptions {
  int64_t interval_ms = 1000;     // between checks of a healthy upstream
  int64_t timeout_ms = 1000;      // for one GET /health (connect + read)
  int64_t max_backoff_ms = 30000; // a down upstream is rechecked after interval, 2x, 4x, ... up to this
};

struct RouteConfig {
  std::string host = "127.0.0.1";
  int port = 8090;  // 0: any free port
  std::string api_key;
  int num_http_threads = 256;  // each open stream holds one

  std::string policy = "session";
  PolicyOptions policy_options;
  size_t cache_block_bytes = 256;     // cache_aware: prompt text per history block
  size_t session_prefix_bytes = 32768;  // session: prompt bytes hashed when a request names no session

  HealthOptions health;

  std::string log_requests_path;  // "": no request log
  bool log_prompts = false;

  std::string count_tokens_model_path;  // --model: count_tokens rendered locally (for openai upstreams)
  double upstream_connect_timeout_s = 3;
  double upstream_read_timeout_s = 600;  // Claude Code's own client timeout

  std::vector<UpstreamSpec> upstreams;
};

// Reads route.toml into `config` (fields it does not mention keep their values).
void load_route_config(const std::string& path, RouteConfig& config);

// Error naming the setting when a value is out of range.
void check_route_config(const RouteConfig& config);

}  // namespace llmesh::route
