#include "route/routing_policy.h"

#include <chrono>
#include <cmath>
#include <random>

#include "core/error.h"
#include "route/cache_aware_policy.h"
#include "route/session_policy.h"

namespace llmesh::route {

std::string_view decision_reason_name(DecisionReason reason) {
  switch (reason) {
    case DecisionReason::sticky: return "sticky";
    case DecisionReason::ring: return "ring";
    case DecisionReason::overflow: return "overflow";
    case DecisionReason::failover: return "failover";
    case DecisionReason::no_session: return "no_session";
    case DecisionReason::prefix_match: return "prefix_match";
    case DecisionReason::short_match: return "short_match";
    case DecisionReason::match_overloaded: return "match_overloaded";
    case DecisionReason::least_loaded: return "least_loaded";
    case DecisionReason::round_robin: return "round_robin";
    case DecisionReason::random: return "random";
    case DecisionReason::none: break;
  }
  return "none";
}

int64_t load_bound(int64_t total_in_flight, double weight, double total_weight, double load_factor) {
  if (total_weight <= 0) return 1;
  const double bound = std::ceil(load_factor * double(total_in_flight + 1) * weight / total_weight - 1e-9);
  return std::max<int64_t>(1, int64_t(bound));
}

std::vector<int64_t> load_bounds(const std::vector<TargetLoad>& targets, double load_factor) {
  int64_t total_in_flight = 0;
  double total_weight = 0;
  for (const TargetLoad& t : targets) {
    if (!t.eligible) continue;
    total_in_flight += t.in_flight;
    total_weight += t.weight;
  }
  std::vector<int64_t> bounds(targets.size(), 0);
  for (size_t i = 0; i < targets.size(); ++i)
    if (targets[i].eligible) bounds[i] = load_bound(total_in_flight, targets[i].weight, total_weight, load_factor);
  return bounds;
}

bool has_room(const TargetLoad& target, const std::vector<int64_t>* bounds, size_t index) {
  if (!target.eligible) return false;
  if (target.max_concurrent > 0 && target.in_flight >= target.max_concurrent) return false;
  return bounds == nullptr || target.in_flight < (*bounds)[index];
}

int least_loaded_target(const std::vector<TargetLoad>& targets, size_t rotate) {
  int best = -1;
  double best_load = 0;
  const size_t n = targets.size();
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (rotate + k) % n;
    if (!has_room(targets[i])) continue;
    const double load = double(targets[i].in_flight) / targets[i].weight;
    if (best < 0 || load < best_load) {
      best = int(i);
      best_load = load;
    }
  }
  return best;
}

namespace {

class LeastLoadedPolicy : public RoutingPolicy {
 public:
  std::string_view name() const override { return "least_loaded"; }
  RoutingDecision choose(const RouteQuery&, const std::vector<TargetLoad>& targets) override {
    const int t = least_loaded_target(targets, rotate_++);
    return {t, t < 0 ? DecisionReason::none : DecisionReason::least_loaded};
  }

 private:
  size_t rotate_ = 0;
};

class RoundRobinPolicy : public RoutingPolicy {
 public:
  std::string_view name() const override { return "round_robin"; }
  RoutingDecision choose(const RouteQuery&, const std::vector<TargetLoad>& targets) override {
    const size_t n = targets.size();
    for (size_t k = 0; k < n; ++k) {
      const size_t i = (next_ + k) % n;
      if (has_room(targets[i])) {
        next_ = i + 1;
        return {int(i), DecisionReason::round_robin};
      }
    }
    return {};
  }

 private:
  size_t next_ = 0;
};

class RandomPolicy : public RoutingPolicy {
 public:
  explicit RandomPolicy(uint64_t seed)
      : rng_(seed != 0 ? seed : uint64_t(std::chrono::steady_clock::now().time_since_epoch().count())) {}
  std::string_view name() const override { return "random"; }
  RoutingDecision choose(const RouteQuery&, const std::vector<TargetLoad>& targets) override {
    double total = 0;
    for (const TargetLoad& t : targets)
      if (has_room(t)) total += t.weight;
    if (total <= 0) return {};
    double x = std::uniform_real_distribution<double>(0, total)(rng_);
    int last = -1;
    for (size_t i = 0; i < targets.size(); ++i) {
      if (!has_room(targets[i])) continue;
      last = int(i);
      if (x < targets[i].weight) return {int(i), DecisionReason::random};
      x -= targets[i].weight;
    }
    return {last, DecisionReason::random};  // rounding left x just past the end
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace

const std::vector<std::string>& routing_policy_names() {
  static const std::vector<std::string> names = {"session", "cache_aware", "least_loaded", "round_robin", "random"};
  return names;
}

std::unique_ptr<RoutingPolicy> make_routing_policy(const std::string& name, const std::vector<HashRing::Target>& targets,
                                                   const PolicyOptions& options) {
  check(options.load_factor >= 1.0, "load_factor={} must be >= 1 (1.25 lets a target take 25% more than average)",
        options.load_factor);
  if (name == "session") return std::make_unique<SessionPolicy>(targets, options);
  if (name == "cache_aware") return std::make_unique<CacheAwarePolicy>(int(targets.size()), options);
  if (name == "least_loaded") return std::make_unique<LeastLoadedPolicy>();
  if (name == "round_robin") return std::make_unique<RoundRobinPolicy>();
  if (name == "random") return std::make_unique<RandomPolicy>(options.random_seed);
  fail("--policy {} is not known; use session, cache_aware, least_loaded, round_robin or random", name);
}

}  // namespace llmesh::route
