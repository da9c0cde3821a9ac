#include "route/router.h"

#include <algorithm>

#include "core/log.h"

namespace llmesh::route {

namespace {

// TTFT buckets from a fast local hit (1 ms) to a long cold prefill (2 min).
std::vector<double> ttft_buckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};
}

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

}  // namespace

Router::Upstream::Upstream(UpstreamSpec s, ConnectionOptions c)
    : spec(std::move(s)), pool(std::make_shared<ConnectionPool>(spec.host, spec.port, c)), ttft(ttft_buckets()) {}

Router::Router(RouteConfig config) : config_(std::move(config)) {
  check_route_config(config_);
  ConnectionOptions c;
  c.connect_timeout_s = config_.upstream_connect_timeout_s;
  c.read_timeout_s = config_.upstream_read_timeout_s;
  std::vector<HashRing::Target> targets;
  for (const UpstreamSpec& spec : config_.upstreams) {
    upstreams_.emplace_back(spec, c);
    targets.push_back({spec.name, spec.weight});
  }
  policy_ = make_routing_policy(config_.policy, targets, config_.policy_options);
  const auto now = Clock::now();
  for (Upstream& u : upstreams_) u.next_check = now;
}

Router::~Router() = default;

Router::Pick Router::pick(const RouteRequest& request, const std::vector<int>& excluded) {
  RouteQuery query;
  query.has_session = request.session.source != api::SessionKeySource::none;
  query.session_hash = request.session.hash;
  query.prefix_blocks = request.prefix_blocks.empty() ? nullptr : &request.prefix_blocks;

  std::lock_guard<std::mutex> lock(mu_);
  // A model some upstreams list goes to those; a model nobody lists goes to the
  // upstreams without a list (they serve whatever they are asked for).
  // When nobody lists it and every upstream has a list, any may try (the upstream decides).
  bool listed = false, any_unlisted = false;
  for (const Upstream& u : upstreams_) {
    listed = listed || (!u.spec.models.empty() && serves_model(u.spec, request.model));
    any_unlisted = any_unlisted || u.spec.models.empty();
  }
  std::vector<TargetLoad> targets(upstreams_.size());
  Pick pick;
  for (size_t i = 0; i < upstreams_.size(); ++i) {
    const Upstream& u = upstreams_[i];
    TargetLoad& t = targets[i];
    t.name = u.spec.name;
    t.weight = u.spec.weight;
    t.in_flight = u.in_flight;
    t.max_concurrent = u.spec.max_concurrent;
    const bool model_ok = listed         ? !u.spec.models.empty() && serves_model(u.spec, request.model)
                          : any_unlisted ? u.spec.models.empty()
                                         : true;
    const bool kind_ok = !request.llmesh_only || u.spec.kind == UpstreamKind::llmesh;
    t.eligible = u.healthy && model_ok && kind_ok &&
                 std::find(excluded.begin(), excluded.end(), int(i)) == excluded.end();
    pick.num_eligible += t.eligible ? 1 : 0;
  }
  const RoutingDecision d = policy_->choose(query, targets);
  pick.upstream = d.target;
  pick.reason = d.reason;
  pick.matched_blocks = d.matched_blocks;
  ++decisions_[size_t(d.reason)];
  if (d.target < 0) {
    ++num_refused_;
    return pick;
  }
  policy_->routed(query, d.target);
  Upstream& u = upstreams_[size_t(d.target)];
  ++u.in_flight;
  u.max_in_flight = std::max(u.max_in_flight, u.in_flight);
  return pick;
}

void Router::finish(int upstream, const RequestOutcome& outcome) {
  Upstream& u = upstreams_[size_t(upstream)];
  {
    std::lock_guard<std::mutex> lock(mu_);
    --u.in_flight;
  }
  if (outcome.retried) {
    u.num_retries.fetch_add(1);
    u.num_errors.fetch_add(1);
    return;
  }
  u.num_requests.fetch_add(1);
  if (outcome.upstream_error) u.num_errors.fetch_add(1);
  if (outcome.usage.prompt_tokens > 0) u.prompt_tokens.fetch_add(outcome.usage.prompt_tokens);
  if (outcome.usage.cached_tokens > 0) u.cached_tokens.fetch_add(outcome.usage.cached_tokens);
  if (outcome.usage.output_tokens > 0) u.output_tokens.fetch_add(outcome.usage.output_tokens);
  if (outcome.ttft_s >= 0 && outcome.http_status == 200) u.ttft.observe(outcome.ttft_s);
}

void Router::report_healthy(int upstream) {
  std::lock_guard<std::mutex> lock(mu_);
  Upstream& u = upstreams_[size_t(upstream)];
  const auto now = Clock::now();
  if (!u.healthy) {
    log_info("llmesh route: upstream {} ({}) is healthy again after {:.1f} s down", u.spec.name, u.spec.url,
             seconds_between(u.down_since, now));
  }
  u.healthy = true;
  u.num_consecutive_failures = 0;
  u.backoff_ms = 0;
  u.next_check = now + std::chrono::milliseconds(config_.health.interval_ms);
}

void Router::report_failure(int upstream, const std::string& error) {
  std::lock_guard<std::mutex> lock(mu_);
  Upstream& u = upstreams_[size_t(upstream)];
  const auto now = Clock::now();
  u.last_error = error;
  ++u.num_consecutive_failures;
  if (u.healthy) {
    u.healthy = false;
    u.context_tokens = 0;  // relearned when it is back
    u.down_since = now;
    u.backoff_ms = config_.health.interval_ms;
    policy_->target_down(upstream);
    log_warn("llmesh route: upstream {} ({}) is down: {}; its sessions move to the others until it is back",
             u.spec.name, u.spec.url, error);
  } else if (now >= u.next_check) {  // a failed recheck: wait twice as long before the next
    u.backoff_ms = std::min(config_.health.max_backoff_ms, std::max<int64_t>(1, u.backoff_ms) * 2);
  }
  u.next_check = now + std::chrono::milliseconds(u.backoff_ms);
}

bool Router::healthy(int upstream) const {
  std::lock_guard<std::mutex> lock(mu_);
  return upstreams_[size_t(upstream)].healthy;
}

std::vector<int> Router::due_for_check(Clock::time_point now) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<int> due;
  for (size_t i = 0; i < upstreams_.size(); ++i)
    if (now >= upstreams_[i].next_check) due.push_back(int(i));
  return due;
}

RouterSnapshot Router::snapshot() const {
  RouterSnapshot s;
  s.policy = config_.policy;
  s.load_factor = config_.policy_options.load_factor;
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = Clock::now();
  const std::vector<int64_t> sessions = policy_->sessions_per_target();
  for (size_t i = 0; i < upstreams_.size(); ++i) {
    const Upstream& u = upstreams_[i];
    UpstreamSnapshot v;
    v.spec = &u.spec;
    v.healthy = u.healthy;
    v.in_flight = u.in_flight;
    v.max_in_flight = u.max_in_flight;
    v.num_requests = u.num_requests.load();
    v.num_errors = u.num_errors.load();
    v.num_retries = u.num_retries.load();
    v.prompt_tokens = u.prompt_tokens.load();
    v.cached_tokens = u.cached_tokens.load();
    v.output_tokens = u.output_tokens.load();
    v.num_sessions = i < sessions.size() ? sessions[i] : 0;
    s.num_sessions += v.num_sessions;
    v.num_consecutive_failures = u.num_consecutive_failures;
    v.down_for_s = u.healthy ? 0 : seconds_between(u.down_since, now);
    v.next_check_in_s = std::max(0.0, seconds_between(now, u.next_check));
    v.last_error = u.last_error;
    v.ttft = &u.ttft;
    s.upstreams.push_back(std::move(v));
  }
  s.decisions = decisions_;
  s.num_refused = num_refused_;
  return s;
}

}  // namespace llmesh::route
