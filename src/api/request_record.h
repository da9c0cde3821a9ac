// A finished generation as the console's request ring keeps it
// (console/request_ring.h): counts, times and the engine's timeline of its
// admission and prefill chunks, with the API edge's own phases around them
// (prepare: template and tokenizer; first token; decode; done).
#pragma once

#include <optional>
#include <string>

#include "api/server_context.h"
#include "api/token_text_pipeline.h"
#include "console/request_ring.h"

namespace llmesh::api {

// `outcome`: ok | error | cancelled; `error` when it failed.
console::RequestRecord request_record(const ServerContext& ctx, const ActiveGeneration& gen,
                                      const TokenTextPipeline& pipeline, std::optional<Clock::time_point> first_token,
                                      const std::string& outcome, const std::string& error = "");

}  // namespace llmesh::api
