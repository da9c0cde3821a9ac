// Serves one generation as a server-sent-event stream over cpp-httplib's
// chunked content provider. The protocol adapter supplies the chunk shapes;
// this file owns the loop, the [DONE] terminator and disconnect handling (a
// failed write or an unwritable socket cancels the engine request).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "api/generation_driver.h"

namespace llmesh::api {

struct StreamJob {
  StreamJob(ActiveGeneration g, TokenTextPipeline p) : gen(std::move(g)), pipeline(std::move(p)) {}
  ActiveGeneration gen;
  TokenTextPipeline pipeline;
  std::function<std::vector<nlohmann::json>()> first_chunks;                   // before any token
  std::function<std::vector<nlohmann::json>(PipelineOutput&)> output_chunks;  // per output
  std::function<std::vector<nlohmann::json>()> last_chunks;                   // after the end (usage)
};

void serve_sse_stream(ServerContext& ctx, httplib::Response& res, std::shared_ptr<StreamJob> job);

}  // namespace llmesh::api
