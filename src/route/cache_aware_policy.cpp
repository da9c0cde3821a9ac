#include "route/cache_aware_policy.h"

namespace llmesh::route {

CacheAwarePolicy::CacheAwarePolicy(int num_targets, const PolicyOptions& options)
    : options_(options), histories_(size_t(num_targets), PrefixHistory(options.history_blocks)) {}

RoutingDecision CacheAwarePolicy::choose(const RouteQuery& query, const std::vector<TargetLoad>& targets) {
  int best = -1;
  int64_t best_match = 0;
  if (query.prefix_blocks != nullptr && !query.prefix_blocks->empty()) {
    for (size_t t = 0; t < targets.size() && t < histories_.size(); ++t) {
      if (!has_room(targets[t])) continue;
      const int64_t match = histories_[t].match_blocks(*query.prefix_blocks);
      const bool better = match > best_match ||
                          (match == best_match && match > 0 && best >= 0 &&
                           double(targets[t].in_flight) / targets[t].weight <
                               double(targets[size_t(best)].in_flight) / targets[size_t(best)].weight);
      if (better) {
        best = int(t);
        best_match = match;
      }
    }
  }
  if (best >= 0 && best_match >= options_.min_match_blocks) {
    const std::vector<int64_t> bounds = load_bounds(targets, options_.load_factor);
    if (has_room(targets[size_t(best)], &bounds, size_t(best))) return {best, DecisionReason::prefix_match, best_match};
    const int t = least_loaded_target(targets, rotate_++);
    return {t, t < 0 ? DecisionReason::none : DecisionReason::match_overloaded, 0};
  }
  const int t = least_loaded_target(targets, rotate_++);
  return {t, t < 0 ? DecisionReason::none : DecisionReason::short_match, 0};
}

void CacheAwarePolicy::routed(const RouteQuery& query, int target) {
  if (target < 0 || size_t(target) >= histories_.size() || query.prefix_blocks == nullptr) return;
  histories_[size_t(target)].insert(*query.prefix_blocks);
}

void CacheAwarePolicy::target_down(int target) {
  if (target >= 0 && size_t(target) < histories_.size()) histories_[size_t(target)].clear();
}

}  // namespace llmesh::route
