// Prometheus text exposition for /metrics, names in vLLM's style
// (llmesh:num_requests_running, llmesh:time_to_first_token_seconds, …).
// Engine counters come from an EngineStats snapshot; the latency histograms
// are observed here, at the API edge, where a request's timeline is known.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "api/http_listener.h"
#include "engine/engine.h"

namespace llmesh::api {

// Cumulative histogram (Prometheus semantics: bucket counts include all smaller buckets).
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double value);
  // Appends the # HELP/# TYPE lines and the _bucket/_sum/_count samples.
  void render(std::string& out, const std::string& name, const std::string& help,
              const std::string& labels) const;
  // The samples only: for a second label set under the same # HELP/# TYPE.
  void render_samples(std::string& out, const std::string& name, const std::string& labels) const;
  int64_t count() const;
  double sum() const;

 private:
  mutable std::mutex mu_;
  std::vector<double> upper_bounds_;
  std::vector<int64_t> bucket_counts_;  // [upper_bounds.size()] non-cumulative
  double sum_ = 0.0;
  int64_t count_ = 0;
};

class ServerMetrics {
 public:
  ServerMetrics();

  // One finished request's timeline (seconds from arrival).
  void observe_request(double ttft_seconds, double e2e_seconds, int64_t num_output_tokens, bool succeeded);
  void count_http_error(int http_status);
  void count_loop_guard_stop();  // a generation the loop guard ended

  std::string render(const engine::EngineStats& stats, const std::string& model_name) const;

 private:
  Histogram ttft_;
  Histogram time_per_output_token_;
  Histogram e2e_latency_;
  mutable std::mutex mu_;
  int64_t num_requests_succeeded_ = 0;
  int64_t num_requests_failed_ = 0;
  int64_t num_http_errors_4xx_ = 0;
  int64_t num_http_errors_5xx_ = 0;
  int64_t num_loop_guard_stops_ = 0;
};

// The HTTP front end's gauges and counters (connections, busy workers, overflow).
std::string render_listener_metrics(const ListenerStats& stats, const std::string& model_name);

}  // namespace llmesh::api
