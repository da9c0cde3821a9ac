// The Anthropic Messages API: POST /v1/messages and /v1/messages/count_tokens.
#pragma once

#include <httplib.h>

#include "api/server_context.h"

namespace llmesh::api {

void handle_messages(ServerContext& ctx, const httplib::Request& req, httplib::Response& res);
void handle_count_tokens(ServerContext& ctx, const httplib::Request& req, httplib::Response& res);

}  // namespace llmesh::api
