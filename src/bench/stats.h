// The statistics every report uses, with their definitions in one place
// (kMetricDefinitions is printed into every report):
//   TTFT  request sent -> first chunk carrying generated text
//   TPOT  per request, (E2E - TTFT) / (output tokens - 1); requests with one
//         output token have none
//   ITL   gaps between consecutive text-carrying chunks, pooled over requests
//   E2E   request sent -> last byte of the response
//   percentiles by linear interpolation between closest ranks:
//         p-th of n sorted values = v[k] + (v[k+1]-v[k])*(r-k), r = (n-1)*p/100, k = floor(r)
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "bench/request_record.h"

namespace llmesh::bench {

extern const char* const kMetricDefinitions;  // markdown bullet list

// Linear-interpolation percentile of `values` (any order), p in [0, 100].
// NaN for an empty input.
double percentile(std::vector<double> values, double p);

struct Distribution {
  int64_t count = 0;
  double mean = 0, p50 = 0, p95 = 0, p99 = 0;  // NaN when count == 0
};
Distribution distribution_of(std::span<const double> values);
nlohmann::json to_json(const Distribution& d);  // NaN -> null

// Per-request derived latencies, milliseconds. NaN where undefined.
double ttft_ms(const RequestRecord& r);
double e2e_ms(const RequestRecord& r);
double tpot_ms(const RequestRecord& r);  // needs completion_tokens >= 2 and a first token
std::vector<double> itl_ms(const RequestRecord& r);

// The standard block of a point: throughput over the measured window and the
// four latency distributions, over the successful requests of `records`.
struct LoadMetrics {
  int64_t num_requests = 0;  // records given (failed and cancelled included)
  int64_t num_ok = 0, num_failed = 0, num_cancelled = 0;
  double duration_s = 0;  // first send -> last end, successful requests
  int64_t input_tokens = 0, output_tokens = 0;
  double request_per_s = 0, input_tokens_per_s = 0, output_tokens_per_s = 0, total_tokens_per_s = 0;
  Distribution ttft_ms, tpot_ms, itl_ms, e2e_ms;
};
LoadMetrics load_metrics(std::span<const RequestRecord> records);
nlohmann::json to_json(const LoadMetrics& m);

}  // namespace llmesh::bench
