// The `cache_aware` policy: send a request where its prompt prefix most likely
// sits in the KV cache already, judged from the router's own history of which
// prompt blocks went where (PrefixHistory, one per target).
//
//   longest match >= min_match_blocks and that target under its load bound
//                                      -> that target (prefix_match)
//   match too short                    -> least loaded (short_match)
//   best match over its bound          -> least loaded (match_overloaded)
// Ties in match length go to the less loaded target. After routing, the
// request's blocks join the chosen target's history; a target that goes down
// loses its history (a restarted server starts cold).
#pragma once

#include "route/prefix_history.h"
#include "route/routing_policy.h"

namespace llmesh::route {

class CacheAwarePolicy : public RoutingPolicy {
 public:
  CacheAwarePolicy(int num_targets, const PolicyOptions& options);

  std::string_view name() const override { return "cache_aware"; }
  RoutingDecision choose(const RouteQuery& query, const std::vector<TargetLoad>& targets) override;
  void routed(const RouteQuery& query, int target) override;
  void target_down(int target) override;

  const PrefixHistory& history(int target) const { return histories_[size_t(target)]; }

 private:
  PolicyOptions options_;
  std::vector<PrefixHistory> histories_;
  size_t rotate_ = 0;
};

}  // namespace llmesh::route
