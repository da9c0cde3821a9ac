// The `session` policy: consistent hashing with bounded load, plus affinity.
//
//   new session      -> walk the ring from its hash; the first target with room
//                       (reason ring when that is its home, else overflow/failover)
//   known session    -> its previous target while that has room (sticky);
//                       else the ring walk as above, and the session moves there
//   no session key   -> least loaded
//
// Why an affinity table on top of the ring: a session that overflowed or failed
// over has warmed its new target's cache; sending it home when the load eases
// would throw that away. The table holds at most max_sessions entries; the least
// recently used go first (such a session falls back to its ring home).
#pragma once

#include <unordered_map>

#include "route/routing_policy.h"

namespace llmesh::route {

class SessionPolicy : public RoutingPolicy {
 public:
  SessionPolicy(const std::vector<HashRing::Target>& targets, const PolicyOptions& options);

  std::string_view name() const override { return "session"; }
  RoutingDecision choose(const RouteQuery& query, const std::vector<TargetLoad>& targets) override;
  void routed(const RouteQuery& query, int target) override;
  std::vector<int64_t> sessions_per_target() const override;

  const HashRing& ring() const { return ring_; }

 private:
  struct Affinity {
    int target;
    uint64_t last_used;  // use_counter_ at the last routed()
  };
  void evict_oldest();

  HashRing ring_;
  PolicyOptions options_;
  std::unordered_map<uint64_t, Affinity> affinity_;  // session hash -> where it went last
  uint64_t use_counter_ = 0;
  size_t rotate_ = 0;  // tie-break for sessionless requests
};

}  // namespace llmesh::route
