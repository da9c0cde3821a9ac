// What `llmesh serve` shows in the console (docs/console.md): its one node
// (memory of weights, KV pool and tiers), the loaded model and the model
// library, the request ring, and the per-second history sample.
#pragma once

#include <nlohmann/json.hpp>

#include "api/server_context.h"
#include "console/console_routes.h"

namespace llmesh::api {

console::ConsoleViews serve_console_views(ServerContext& ctx);

// The history's sampler: rates against the previous call's counters (one thread calls it).
class ServeHistorySampler {
 public:
  explicit ServeHistorySampler(const ServerContext& ctx) : ctx_(ctx) {}
  // null while the model loads.
  nlohmann::json operator()();

 private:
  const ServerContext& ctx_;
  bool has_previous_ = false;
  engine::EngineStats previous_;
  double previous_at_ = 0;
  std::vector<int64_t> evictions_;  // pool blocks evicted in each of the last 60 samples
};

}  // namespace llmesh::api
