// What `llmesh route` shows in the console (docs/console.md): the router
// itself and each upstream as nodes (an llmesh upstream's own node view —
// memory, KV pool and tiers — fetched from it, the others from health
// checks), the models each upstream serves, the router's request ring (with
// the upstream that served each), and the per-second history of the token
// counts the upstreams reported.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "console/console_routes.h"
#include "console/request_ring.h"
#include "route/router.h"

namespace llmesh::route {

struct RouteConsoleState {
  Router& router;
  console::RequestRing& requests;
  double started_at;  // Unix seconds
  const int& port;    // the bound port (RouteServer::bind sets it after the views are made)
};

console::ConsoleViews route_console_views(const RouteConsoleState& state);

// The console's path names for an API path: chat | completions | messages | count_tokens | responses.
std::string protocol_of_path(const std::string& path);

class RouteHistorySampler {
 public:
  RouteHistorySampler(Router& router, const console::RequestRing& requests) : router_(router), requests_(requests) {}
  nlohmann::json operator()();

 private:
  Router& router_;
  const console::RequestRing& requests_;
  bool has_previous_ = false;
  int64_t previous_prompt_ = 0, previous_cached_ = 0, previous_output_ = 0;
  double previous_at_ = 0;
};

}  // namespace llmesh::route
