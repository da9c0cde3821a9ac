// The list of points a run measures: the built-in "quick map", the 4-point
// sanity set, one point per extra mode, or a scenario file (TOML or TSV), and
// --scale applied to all of them.
#pragma once

#include <string>
#include <vector>

#include "bench/point_spec.h"

namespace llmesh::bench {

// 1K->1 C1, 32K->1 C1, 128K->1 C1, 32K->1 C16, 1K->1K C1/C16/C32/C64,
// 1K->4K C16, 128K->1K C1, 32K->1K C8.
std::vector<PointSpec> quick_map_points();
// Four quick points that check a server end to end in seconds.
std::vector<PointSpec> sanity_points();
// A point of the given mode with the defaults the issue describes:
// "interference", "prefix", "needle", "sessions", "trace" (needs trace_path).
PointSpec mode_point(const std::string& mode, const std::string& trace_path = "");

// Scenario file: TOML with [[point]] tables (fields as in PointSpec's JSON:
// kind, name, isl, osl, concurrency, requests, warmups, cache, ...) or TSV with
// a header row naming columns among name, isl, osl, concurrency, requests,
// warmups, cache (fixed points only). Throws Error naming the file and line.
std::vector<PointSpec> load_scenario_file(const std::string& path);

// Lengths (ISL, OSL, injected and session token counts, context lengths) and
// request/warm-up counts times `scale`, rounded, never below 1 (16 for ISL).
// Concurrency is kept (it is what the point measures), so a point keeps at
// least `concurrency` requests.
PointSpec scaled(PointSpec spec, double scale);

// The label a point gets when none is given ("1K->1K C16", "soak 8 sessions 2h").
std::string default_name(const PointSpec& p);

}  // namespace llmesh::bench
