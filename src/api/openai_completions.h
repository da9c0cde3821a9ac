// POST /v1/completions: a raw prompt (text or token ids), no template, no
// output parsing; stop strings still apply.
#pragma once

#include <httplib.h>

#include "api/server_context.h"

namespace llmesh::api {

void handle_completions(ServerContext& ctx, const httplib::Request& req, httplib::Response& res);

}  // namespace llmesh::api
