// The KV cache's state as the outside sees it: the pool and its lower tiers
// (host RAM, disk) in /metrics (Prometheus text, a `tier` label) and as JSON
// for GET /v1/cache (what the console and scripts read; docs/kv-tiers.md has
// the schema). Both come from one EngineStats snapshot.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "engine/engine.h"

namespace llmesh::api {

// Appends the tier metrics (nothing when no tier is configured).
void render_tier_metrics(std::string& out, const engine::EngineStats& stats, const std::string& labels);

nlohmann::json cache_view_json(const engine::EngineStats& stats);

}  // namespace llmesh::api
