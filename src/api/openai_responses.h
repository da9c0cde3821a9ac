// The OpenAI Responses API: POST /v1/responses (what Codex speaks).
#pragma once

#include <string>

#include <httplib.h>

#include "api/generation_request.h"
#include "api/responses_request.h"
#include "api/server_context.h"

namespace llmesh::api {

void handle_responses(ServerContext& ctx, const httplib::Request& req, httplib::Response& res);

}  // namespace llmesh::api
