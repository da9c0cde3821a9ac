// The OpenAI Responses API: POST /v1/responses (what Codex speaks).
#pragma once

#include <string>

#include <httplib.h>

#include "api/generation_request.h"
#include "api/responses_request.h"
#include "api/server_context.h"

namespace llmesh::api {

// The normalized request of a Responses request. `body` is the raw request:
// the constraint's schemas are read from it in the client's key order.
GenerationRequest to_generation_request(const ResponsesRequest& request, const std::string& body);

void handle_responses(ServerContext& ctx, const httplib::Request& req, httplib::Response& res);

}  // namespace llmesh::api
