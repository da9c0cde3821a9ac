// A point's results, recomputed from its raw records (never stored numbers).
// The result is JSON so reports, summary.jsonl and `bench compare` share one
// shape:
//   {kind, name, key, isl, osl, concurrency, cache, finished, skipped?, valid,
//    invalid_reasons: [...], notes: [...], metrics: LoadMetrics?, <mode fields>}
#pragma once

#include <nlohmann/json.hpp>

#include "bench/results_store.h"

namespace llmesh::bench {

nlohmann::json analyze_point(const StoredPoint& point);

// Per mode (defined next to each mode's runner).
nlohmann::json analyze_fixed(const StoredPoint& point);
nlohmann::json analyze_interference(const StoredPoint& point);
nlohmann::json analyze_prefix_ab(const StoredPoint& point);
nlohmann::json analyze_needle(const StoredPoint& point);
nlohmann::json analyze_sessions(const StoredPoint& point);  // sessions and trace
nlohmann::json analyze_soak(const StoredPoint& point);

// Shared checks: appends reasons when measured records failed, have other
// lengths than asked, or (cold) hit cached tokens.
void check_records(const std::vector<RequestRecord>& records, bool expect_cold, nlohmann::json& result);

// Records of one role.
std::vector<RequestRecord> records_with_role(const StoredPoint& point, const std::string& role);

}  // namespace llmesh::bench
