// Serves one generation as a server-sent-event stream over cpp-httplib's
// chunked content provider. The protocol adapter supplies the chunk shapes;
// this file owns the loop, the [DONE] terminator and disconnect handling (a
// failed write or an unwritable socket cancels the engine request).
// collect_events runs the same job without streaming, for protocols whose
// non-streaming response is built from the same events.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "api/api_error.h"
#include "api/generation_driver.h"
#include "api/generation_pipeline.h"

namespace llmesh::api {

struct StreamJob {
  explicit StreamJob(StartedGeneration started)
      : gen(std::move(started.gen)), pipeline(std::move(started.pipeline)) {}
  ActiveGeneration gen;
  TokenTextPipeline pipeline;
  std::function<std::vector<nlohmann::json>()> first_chunks;                   // before any token
  std::function<std::vector<nlohmann::json>(PipelineOutput&)> output_chunks;  // per output
  std::function<std::vector<nlohmann::json>()> last_chunks;                   // after the end (usage)
  // After headers went out, an error is reported in-band; default: the OpenAI error body.
  std::function<std::vector<nlohmann::json>(const ApiError&)> error_chunks;
  // Sent while no output arrives for keepalive_interval_s (a long prefill), so
  // proxies and clients with read timeouts keep the connection. Without
  // keepalive_chunks, OpenAI chat framing sends an SSE comment line.
  std::function<std::vector<nlohmann::json>()> keepalive_chunks;
  double keepalive_interval_s = 2.0;
  // false: OpenAI chat framing (`data:` lines, then `data: [DONE]`);
  // true: typed events (`event: <type>` + `data:`, no terminator).
  bool typed_events = false;
};

void serve_sse_stream(ServerContext& ctx, httplib::Response& res, std::shared_ptr<StreamJob> job);

// Runs the job to its end on this thread: every chunk it would have streamed
// (first, per output, last), in order. ApiError when the engine fails.
std::vector<nlohmann::json> collect_events(ServerContext& ctx, StreamJob& job);

}  // namespace llmesh::api
