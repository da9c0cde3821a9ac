#include "route/session_policy.h"

#include <algorithm>

namespace llmesh::route {

SessionPolicy::SessionPolicy(const std::vector<HashRing::Target>& targets, const PolicyOptions& options)
    : ring_(targets, options.vnodes_per_weight), options_(options) {}

RoutingDecision SessionPolicy::choose(const RouteQuery& query, const std::vector<TargetLoad>& targets) {
  if (!query.has_session) {
    const int t = least_loaded_target(targets, rotate_++);
    return {t, t < 0 ? DecisionReason::none : DecisionReason::no_session};
  }
  const std::vector<int64_t> bounds = load_bounds(targets, options_.load_factor);
  const std::vector<int> order = ring_.walk(query.session_hash);
  if (order.empty()) return {};
  int preferred = order.front();
  bool known = false;
  if (auto it = affinity_.find(query.session_hash); it != affinity_.end() && it->second.target < int(targets.size())) {
    preferred = it->second.target;
    known = true;
  }
  if (has_room(targets[size_t(preferred)], &bounds, size_t(preferred)))
    return {preferred, known ? DecisionReason::sticky : DecisionReason::ring};
  const DecisionReason reason =
      targets[size_t(preferred)].eligible ? DecisionReason::overflow : DecisionReason::failover;
  for (int t : order)
    if (has_room(targets[size_t(t)], &bounds, size_t(t))) return {t, reason};
  return {};
}

void SessionPolicy::routed(const RouteQuery& query, int target) {
  if (!query.has_session || target < 0) return;
  affinity_[query.session_hash] = {target, ++use_counter_};
  if (int64_t(affinity_.size()) > options_.max_sessions) evict_oldest();
}

// Drops the least recently used tenth (at least one), so eviction runs rarely.
void SessionPolicy::evict_oldest() {
  std::vector<uint64_t> uses;
  uses.reserve(affinity_.size());
  for (const auto& [hash, a] : affinity_) uses.push_back(a.last_used);
  const size_t num_drop = std::max<size_t>(1, affinity_.size() / 10);
  std::nth_element(uses.begin(), uses.begin() + ptrdiff_t(num_drop - 1), uses.end());
  const uint64_t cutoff = uses[num_drop - 1];
  for (auto it = affinity_.begin(); it != affinity_.end();) {
    it = it->second.last_used <= cutoff ? affinity_.erase(it) : std::next(it);
  }
}

std::vector<int64_t> SessionPolicy::sessions_per_target() const {
  std::vector<int64_t> counts(size_t(ring_.num_targets()), 0);
  for (const auto& [hash, a] : affinity_)
    if (a.target >= 0 && a.target < int(counts.size())) ++counts[size_t(a.target)];
  return counts;
}

}  // namespace llmesh::route
