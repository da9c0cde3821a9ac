#include "bench/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace llmesh::bench {

const char* const kMetricDefinitions =
    "- **TTFT**: request sent → first streamed chunk carrying generated text (content, reasoning or a "
    "tool call); when a request streams no text at all (e.g. its only token was a special token), the "
    "chunk that carries its finish reason.\n"
    "- **TPOT**: per request, (E2E − TTFT) / (output tokens − 1), output tokens from the server's "
    "`usage`; requests with one output token have no TPOT.\n"
    "- **ITL**: gaps between consecutive text-carrying chunks of a request, pooled over all requests "
    "(a chunk may hold several tokens, so ITL can exceed TPOT).\n"
    "- **E2E**: request sent → last byte of the response.\n"
    "- **Throughput**: successful requests, prompt tokens, output tokens and their sum, divided by the "
    "measured window (first request sent → last successful response finished).\n"
    "- **Percentiles**: linear interpolation between closest ranks: for n sorted values and p in "
    "[0,100], r = (n−1)·p/100, value = v[⌊r⌋] + (v[⌊r⌋+1] − v[⌊r⌋])·(r − ⌊r⌋).\n"
    "- **Cold**: after warm-ups the server's prefix cache is flushed and every measured prompt is "
    "unique; a point is invalid when a measured request reports cached prompt tokens.\n"
    "- **Valid**: every measured request succeeded with exactly the requested prompt and output "
    "lengths according to the server's `usage`.\n";

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return kNaN;
  std::sort(values.begin(), values.end());
  const double rank = (static_cast<double>(values.size()) - 1) * p / 100.0;
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (rank - static_cast<double>(lo));
}

Distribution distribution_of(std::span<const double> values) {
  std::vector<double> finite;
  for (double v : values)
    if (std::isfinite(v)) finite.push_back(v);
  Distribution d;
  d.count = static_cast<int64_t>(finite.size());
  if (finite.empty()) {
    d.mean = d.p50 = d.p95 = d.p99 = kNaN;
    return d;
  }
  double sum = 0;
  for (double v : finite) sum += v;
  d.mean = sum / static_cast<double>(finite.size());
  d.p50 = percentile(finite, 50);
  d.p95 = percentile(finite, 95);
  d.p99 = percentile(finite, 99);
  return d;
}

static nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

nlohmann::json to_json(const Distribution& d) {
  return {{"count", d.count},
          {"mean", number_or_null(d.mean)},
          {"p50", number_or_null(d.p50)},
          {"p95", number_or_null(d.p95)},
          {"p99", number_or_null(d.p99)}};
}

double ttft_ms(const RequestRecord& r) { return r.first_token_s >= 0 ? r.first_token_s * 1000.0 : kNaN; }

double e2e_ms(const RequestRecord& r) { return r.ok ? r.end_s * 1000.0 : kNaN; }

double tpot_ms(const RequestRecord& r) {
  if (!r.ok || r.first_token_s < 0 || r.completion_tokens < 2) return kNaN;
  return (r.end_s - r.first_token_s) * 1000.0 / static_cast<double>(r.completion_tokens - 1);
}

std::vector<double> itl_ms(const RequestRecord& r) {
  std::vector<double> gaps;
  for (size_t i = 1; i < r.chunk_s.size(); ++i) gaps.push_back((r.chunk_s[i] - r.chunk_s[i - 1]) * 1000.0);
  return gaps;
}

LoadMetrics load_metrics(std::span<const RequestRecord> records) {
  LoadMetrics m;
  m.num_requests = static_cast<int64_t>(records.size());
  std::vector<double> ttft, tpot, itl, e2e;
  double window_start = std::numeric_limits<double>::infinity(), window_end = -window_start;
  for (const RequestRecord& r : records) {
    if (r.cancelled) {
      ++m.num_cancelled;
      continue;
    }
    if (!r.ok) {
      ++m.num_failed;
      continue;
    }
    ++m.num_ok;
    window_start = std::min(window_start, r.send_s);
    window_end = std::max(window_end, r.send_s + r.end_s);
    m.input_tokens += std::max<int64_t>(r.prompt_tokens, 0);
    m.output_tokens += std::max<int64_t>(r.completion_tokens, 0);
    ttft.push_back(ttft_ms(r));
    tpot.push_back(tpot_ms(r));
    e2e.push_back(e2e_ms(r));
    for (double g : itl_ms(r)) itl.push_back(g);
  }
  if (m.num_ok > 0) {
    m.duration_s = window_end - window_start;
    if (m.duration_s > 0) {
      m.request_per_s = static_cast<double>(m.num_ok) / m.duration_s;
      m.input_tokens_per_s = static_cast<double>(m.input_tokens) / m.duration_s;
      m.output_tokens_per_s = static_cast<double>(m.output_tokens) / m.duration_s;
      m.total_tokens_per_s = static_cast<double>(m.input_tokens + m.output_tokens) / m.duration_s;
    }
  }
  m.ttft_ms = distribution_of(ttft);
  m.tpot_ms = distribution_of(tpot);
  m.itl_ms = distribution_of(itl);
  m.e2e_ms = distribution_of(e2e);
  return m;
}

nlohmann::json to_json(const LoadMetrics& m) {
  return {{"num_requests", m.num_requests},
          {"num_ok", m.num_ok},
          {"num_failed", m.num_failed},
          {"num_cancelled", m.num_cancelled},
          {"duration_s", m.duration_s},
          {"input_tokens", m.input_tokens},
          {"output_tokens", m.output_tokens},
          {"request_per_s", m.request_per_s},
          {"input_tokens_per_s", m.input_tokens_per_s},
          {"output_tokens_per_s", m.output_tokens_per_s},
          {"total_tokens_per_s", m.total_tokens_per_s},
          {"ttft_ms", to_json(m.ttft_ms)},
          {"tpot_ms", to_json(m.tpot_ms)},
          {"itl_ms", to_json(m.itl_ms)},
          {"e2e_ms", to_json(m.e2e_ms)}};
}

}  // namespace llmesh::bench
