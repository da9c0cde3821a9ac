#include "api/metrics.h"

#include "api/cache_view.h"
#include "core/host_memory.h"

#include <algorithm>

#include <fmt/format.h>

namespace llmesh::api {

namespace {

std::string format_bound(double v) { return fmt::format("{}", v); }

void gauge(std::string& out, const std::string& name, const std::string& help, const std::string& labels,
           double value, const char* type = "gauge") {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{}{{{}}} {}\n", name, help, name, type, name, labels, value);
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_bounds_(std::move(upper_bounds)), bucket_counts_(upper_bounds_.size(), 0) {}

void Histogram::observe(double value) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), value);  // first bound >= value
  if (it != upper_bounds_.end()) ++bucket_counts_[size_t(it - upper_bounds_.begin())];
  sum_ += value;
  ++count_;
}

int64_t Histogram::count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return count_;
}

double Histogram::sum() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sum_;
}

void Histogram::render(std::string& out, const std::string& name, const std::string& help,
                       const std::string& labels) const {
  out += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
  render_samples(out, name, labels);
}

void Histogram::render_samples(std::string& out, const std::string& name, const std::string& labels) const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t cumulative = 0;
  for (size_t i = 0; i < upper_bounds_.size(); ++i) {
    cumulative += bucket_counts_[i];
    out += fmt::format("{}_bucket{{{},le=\"{}\"}} {}\n", name, labels, format_bound(upper_bounds_[i]), cumulative);
  }
  out += fmt::format("{}_bucket{{{},le=\"+Inf\"}} {}\n", name, labels, count_);
  out += fmt::format("{}_sum{{{}}} {}\n{}_count{{{}}} {}\n", name, labels, sum_, name, labels, count_);
}

ServerMetrics::ServerMetrics()
    : ttft_({0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
             40.0, 80.0, 160.0}),
      time_per_output_token_({0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0,
                              7.5, 10.0, 20.0, 40.0, 80.0}),
      e2e_latency_({0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0,
                    240.0, 480.0, 960.0, 1920.0}) {}

void ServerMetrics::observe_request(double ttft_seconds, double e2e_seconds, int64_t num_output_tokens,
                                    bool succeeded) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    (succeeded ? num_requests_succeeded_ : num_requests_failed_)++;
  }
  if (num_output_tokens <= 0) return;
  ttft_.observe(ttft_seconds);
  e2e_latency_.observe(e2e_seconds);
  if (num_output_tokens > 1) {
    time_per_output_token_.observe((e2e_seconds - ttft_seconds) / double(num_output_tokens - 1));
  }
}

void ServerMetrics::count_http_error(int http_status) {
  std::lock_guard<std::mutex> lock(mu_);
  (http_status >= 500 ? num_http_errors_5xx_ : num_http_errors_4xx_)++;
}

void ServerMetrics::count_loop_guard_stop() {
  std::lock_guard<std::mutex> lock(mu_);
  ++num_loop_guard_stops_;
}

std::string ServerMetrics::render(const engine::EngineStats& s, const std::string& model_name) const {
  const std::string labels = fmt::format("model_name=\"{}\"", model_name);
  std::string out;
  gauge(out, "llmesh:num_requests_running", "Requests in the running batch.", labels, double(s.num_running));
  gauge(out, "llmesh:num_requests_waiting", "Requests waiting to be scheduled.", labels, double(s.num_waiting));
  gauge(out, "llmesh:kv_cache_blocks_total", "KV cache blocks in the pool.", labels, double(s.num_blocks_total));
  gauge(out, "llmesh:kv_cache_blocks_used", "KV cache blocks held by requests.", labels, double(s.num_blocks_used));
  gauge(out, "llmesh:kv_cache_blocks_cached", "Unreferenced KV blocks kept for prefix reuse.", labels,
        double(s.num_blocks_cached));
  gauge(out, "llmesh:kv_cache_usage_perc", "Fraction of KV blocks held by requests (0-1).", labels,
        s.num_blocks_total > 0 ? double(s.num_blocks_used) / double(s.num_blocks_total) : 0.0);
  gauge(out, "llmesh:prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache.", labels,
        double(s.prefix_queried_tokens), "counter");
  gauge(out, "llmesh:prefix_cache_hits_total", "Prompt tokens served from the prefix cache.", labels,
        double(s.prefix_hit_tokens), "counter");
  gauge(out, "llmesh:prompt_tokens_total", "Prompt tokens processed.", labels, double(s.prompt_tokens), "counter");
  gauge(out, "llmesh:generation_tokens_total", "Tokens generated.", labels, double(s.generation_tokens),
        "counter");
  gauge(out, "llmesh:num_preemptions_total", "Requests preempted (recomputed later).", labels,
        double(s.num_preemptions), "counter");
  gauge(out, "llmesh:kv_cache_evicted_blocks_total",
        "Cached KV blocks evicted to make room (the cache-avalanche indicator).", labels,
        double(s.num_evicted_blocks), "counter");
  render_tier_metrics(out, s, labels);
  {
    std::lock_guard<std::mutex> lock(mu_);
    out += "# HELP llmesh:request_success_total Requests finished, by outcome.\n"
           "# TYPE llmesh:request_success_total counter\n";
    out += fmt::format("llmesh:request_success_total{{{},outcome=\"ok\"}} {}\n", labels, num_requests_succeeded_);
    out += fmt::format("llmesh:request_success_total{{{},outcome=\"error\"}} {}\n", labels, num_requests_failed_);
    out += "# HELP llmesh:http_errors_total Error responses, by status class.\n"
           "# TYPE llmesh:http_errors_total counter\n";
    out += fmt::format("llmesh:http_errors_total{{{},class=\"4xx\"}} {}\n", labels, num_http_errors_4xx_);
    out += fmt::format("llmesh:http_errors_total{{{},class=\"5xx\"}} {}\n", labels, num_http_errors_5xx_);
    gauge(out, "llmesh:loop_guard_stops_total", "Generations ended by the repetition-loop guard.", labels,
          double(num_loop_guard_stops_), "counter");
  }
  ttft_.render(out, "llmesh:time_to_first_token_seconds", "Time to first token.", labels);
  time_per_output_token_.render(out, "llmesh:time_per_output_token_seconds", "Time per output token after the first.",
                                labels);
  e2e_latency_.render(out, "llmesh:e2e_request_latency_seconds", "End-to-end request latency.", labels);
  return out;
}

std::string render_listener_metrics(const ListenerStats& s, const std::string& model_name) {
  std::string out;
  const std::string labels = fmt::format("model_name=\"{}\"", model_name);
  gauge(out, "llmesh:http_workers", "HTTP worker threads (each serves one connection at a time).", labels,
        double(s.num_workers));
  gauge(out, "llmesh:http_workers_busy", "HTTP workers serving a connection now.", labels,
        double(s.num_busy_workers));
  gauge(out, "llmesh:http_connections_total", "Connections accepted.", labels, double(s.num_connections), "counter");
  gauge(out, "llmesh:http_overflow_connections_total",
        "Connections answered 503 because every worker was busy.", labels, double(s.num_overflow_connections),
        "counter");
  gauge(out, "llmesh:http_dropped_connections_total",
        "Connections closed unanswered because the overflow backlog was full too.", labels,
        double(s.num_dropped_connections), "counter");
  gauge(out, "llmesh:tls_handshake_failures_total", "TLS handshakes that failed.", labels,
        double(s.num_tls_handshake_failures), "counter");
  out += fmt::format("# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
                     "# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes {}\n",
                     resident_memory_bytes());
  return out;
}

}  // namespace llmesh::api
