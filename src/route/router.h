// The router's state: the upstreams (their health, in-flight counts and
// counters), the routing policy, and the decisions it made. HTTP lives
// elsewhere (route_server, proxy); this class is what they consult and report to.
//
// Lifecycle of one request:
//   pick(request, excluded)   -> an upstream, counted in flight (reason counted)
//   ... forward it ...
//   finish(upstream, outcome) -> no longer in flight; counters and TTFT observed
// A failed attempt finishes with outcome.retried and the next pick() excludes it.
//
// Health: an upstream starts healthy; report_failure() (a failed request or
// health check) marks it down at once, so new requests and its sessions go
// elsewhere while its in-flight ones finish; it is checked again after
// interval, 2x, 4x, ... up to max_backoff; report_healthy() brings it back.
//
// Thread safety: every public method may be called from any thread.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/metrics.h"
#include "route/connection_pool.h"
#include "route/response_observer.h"
#include "route/route_config.h"
#include "route/route_request.h"
#include "route/routing_policy.h"

namespace llmesh::route {

using Clock = std::chrono::steady_clock;

struct RequestOutcome {
  int http_status = 0;          // as the client got it (0: the exchange broke before a status)
  bool upstream_error = false;  // connection/read failure, or a 5xx/429 from the upstream
  bool retried = false;         // abandoned for another upstream before any byte reached the client
  bool client_gone = false;     // the client disconnected first
  double ttft_s = -1;           // to the first output byte or token (-1: none)
  double duration_s = 0;
  ObservedUsage usage;
};

struct UpstreamSnapshot {
  const UpstreamSpec* spec = nullptr;
  bool healthy = true;
  int64_t in_flight = 0, max_in_flight = 0;
  int64_t num_requests = 0, num_errors = 0, num_retries = 0;
  int64_t prompt_tokens = 0, cached_tokens = 0, output_tokens = 0;
  int64_t num_sessions = 0;
  int64_t num_consecutive_failures = 0;
  double down_for_s = 0;        // 0 when healthy
  double next_check_in_s = 0;
  std::string last_error;
  const api::Histogram* ttft = nullptr;
};

struct RouterSnapshot {
  std::string policy;
  double load_factor = 0;
  std::vector<UpstreamSnapshot> upstreams;
  std::array<int64_t, kNumDecisionReasons> decisions{};
  int64_t num_refused = 0;  // no eligible upstream with room
  int64_t num_sessions = 0;
};

class Router {
 public:
  explicit Router(RouteConfig config);
  ~Router();

  const RouteConfig& config() const { return config_; }
  int num_upstreams() const { return int(upstreams_.size()); }
  const UpstreamSpec& upstream(int i) const { return upstreams_[size_t(i)].spec; }
  std::shared_ptr<ConnectionPool> connections(int i) const { return upstreams_[size_t(i)].pool; }
  bool wants_prefix_blocks() const { return config_.policy == "cache_aware"; }

  struct Pick {
    int upstream = -1;  // -1: none eligible with room (see num_eligible)
    DecisionReason reason = DecisionReason::none;
    int64_t matched_blocks = 0;
    int num_eligible = 0;  // upstreams that were healthy, serve the model and not excluded
  };
  Pick pick(const RouteRequest& request, const std::vector<int>& excluded);
  void finish(int upstream, const RequestOutcome& outcome);

  void report_healthy(int upstream);
  void report_failure(int upstream, const std::string& error);
  bool healthy(int upstream) const;
  // The upstream's context length (from its /v1/models; 0 while unknown): the bridge fits max_tokens into it.
  void set_context_tokens(int upstream, int64_t num_tokens) { upstreams_[size_t(upstream)].context_tokens = num_tokens; }
  int64_t context_tokens(int upstream) const { return upstreams_[size_t(upstream)].context_tokens.load(); }
  // Upstreams whose next health check is due.
  std::vector<int> due_for_check(Clock::time_point now) const;

  RouterSnapshot snapshot() const;

 private:
  struct Upstream {
    explicit Upstream(UpstreamSpec s, ConnectionOptions c);
    UpstreamSpec spec;
    std::shared_ptr<ConnectionPool> pool;
    api::Histogram ttft;
    // Under Router::mu_:
    bool healthy = true;
    int64_t in_flight = 0, max_in_flight = 0;
    int64_t num_consecutive_failures = 0;
    int64_t backoff_ms = 0;
    Clock::time_point next_check, down_since;
    std::string last_error;
    // Counters (atomics: finish() adds to them outside the lock).
    std::atomic<int64_t> num_requests{0}, num_errors{0}, num_retries{0};
    std::atomic<int64_t> prompt_tokens{0}, cached_tokens{0}, output_tokens{0};
    std::atomic<int64_t> context_tokens{0};
  };

  RouteConfig config_;
  std::deque<Upstream> upstreams_;  // deque: Upstream holds atomics and a mutex, never moves
  mutable std::mutex mu_;
  std::unique_ptr<RoutingPolicy> policy_;  // under mu_
  std::array<int64_t, kNumDecisionReasons> decisions_{};
  int64_t num_refused_ = 0;
};

}  // namespace llmesh::route
