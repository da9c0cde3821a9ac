// One GET to several upstreams at once (GET /v1/models for the models union;
// the console's node and model views of llmesh upstreams), each with a short
// timeout so a slow upstream delays the answer by seconds, not minutes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "route/router.h"

namespace llmesh::route {

// `path` from every healthy upstream that `wanted(i)` selects, in parallel:
// answers[i] is the parsed 200 body, null for an upstream skipped, down, or
// that answered something else. Sends the upstream's API key, or else the
// client's Authorization / x-api-key from `client` (null: none).
std::vector<nlohmann::json> fetch_from_upstreams(Router& router, const std::string& path,
                                                 const std::function<bool(int)>& wanted,
                                                 const httplib::Request* client);

}  // namespace llmesh::route
