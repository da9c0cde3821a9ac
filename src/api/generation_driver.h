// Runs one submitted generation to its end on the calling (HTTP) thread:
// reads the request's TokenEvents, passes them through the TokenTextPipeline
// and hands each non-empty output to the protocol adapter.
#pragma once

#include <functional>

#include "api/server_context.h"
#include "api/token_text_pipeline.h"

namespace llmesh::api {

struct GenerationCallbacks {
  // Receives every non-empty output, the last one with finish_reason set.
  // Returns false when the client is gone: the request is cancelled.
  std::function<bool(PipelineOutput&)> on_output;
  // Polled while waiting for the engine; false means the client is gone.
  std::function<bool()> client_alive;
};

// Returns false when the client went away (the engine request was cancelled).
// Throws ApiError when the engine reports an error (the request is cancelled).
// Observes the latency histograms in ctx.metrics.
bool drive_generation(ServerContext& ctx, ActiveGeneration& gen, TokenTextPipeline& pipeline,
                      const GenerationCallbacks& callbacks);

}  // namespace llmesh::api
