// What the router reads from a client request before choosing an upstream:
// the API, model, stream flag, session key and (for cache_aware) the prompt's
// chained block hashes. The router never validates a request: a body that is
// not JSON, or lacks fields, is forwarded as sent and the upstream answers it
// in its own words.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "api/session_key.h"

namespace llmesh::route {

struct RouteRequest {
  std::string path;             // without the query
  bool has_prompt = false;      // one of the four generation APIs (api is valid)
  api::PromptApi api = api::PromptApi::chat_completions;
  nlohmann::json body;          // parsed body; null when it is not JSON
  std::string model;            // "" when absent
  bool stream = false;
  api::SessionKey session;
  std::vector<uint64_t> prefix_blocks;  // chained hashes of the prompt text; only when asked for
  bool llmesh_only = false;             // only kind=llmesh upstreams can answer it (count_tokens)
};

struct RouteRequestOptions {
  size_t session_prefix_bytes = api::kDefaultSessionPrefixBytes;
  size_t cache_block_bytes = 256;
  bool want_prefix_blocks = false;
};

RouteRequest read_route_request(const httplib::Request& req, const RouteRequestOptions& options);

}  // namespace llmesh::route
