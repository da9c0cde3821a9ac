// How the router picks an upstream for a request. A policy sees plain data
// (each target's eligibility, weight and in-flight count; the request's
// session hash and prefix-block hashes) and keeps its own memory (session
// affinity, prefix history), so it runs and is tested without HTTP.
//
// Policies (make_routing_policy):
//   session       consistent hashing with bounded load on the session key:
//                 a session stays on its target (sticky) until that target is
//                 unhealthy or over its bound, then walks the ring
//   cache_aware   the target whose history holds the longest prefix of this
//                 request's prompt blocks; least loaded when the match is short
//   least_loaded  fewest in-flight requests per unit of weight
//   round_robin   each eligible target in turn
//   random        weighted random
//
// Bounded load (Mirrokni et al., "Consistent Hashing with Bounded Loads"):
// with m requests in flight on the eligible targets, target i may take this
// request only while in_flight_i < ceil(c x (m + 1) x w_i / W), W the sum of
// eligible weights, c = load_factor >= 1. Some eligible target always has
// room, so the bound alone never refuses a request; max_concurrent can.
//
// Thread safety: none; the Router calls a policy under its lock.
// To add a policy: a class here or in its own file, a name in
// make_routing_policy and routing_policy_names(), reasons in DecisionReason, tests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "route/hash_ring.h"

namespace llmesh::route {

// What the policy may know about one target right now.
struct TargetLoad {
  std::string name;
  double weight = 1.0;
  bool eligible = true;        // healthy, serves the model, not already tried for this request
  int64_t in_flight = 0;       // requests routed to it and not finished
  int64_t max_concurrent = 0;  // 0: no limit
};

struct RouteQuery {
  bool has_session = false;
  uint64_t session_hash = 0;
  const std::vector<uint64_t>* prefix_blocks = nullptr;  // chained block hashes (cache_aware); may be null
};

// Why a target was chosen; counted per reason in /metrics.
enum class DecisionReason {
  sticky,        // session: its previous target
  ring,          // session: a new session's ring home
  overflow,      // session: its target was over the load bound; walked the ring
  failover,      // session: its target was unhealthy or had failed this request; walked the ring
  no_session,    // session: no key; least loaded
  prefix_match,  // cache_aware: longest known prefix
  short_match,   // cache_aware: match below the minimum; least loaded
  match_overloaded,  // cache_aware: best match over its bound; least loaded
  least_loaded,
  round_robin,
  random,
  none,  // no eligible target with room
};
std::string_view decision_reason_name(DecisionReason reason);
inline constexpr int kNumDecisionReasons = int(DecisionReason::none) + 1;

struct RoutingDecision {
  int target = -1;  // -1: nothing eligible with room
  DecisionReason reason = DecisionReason::none;
  int64_t matched_blocks = 0;  // cache_aware: leading prompt blocks found in the target's history
};

struct PolicyOptions {
  double load_factor = 1.25;        // c of the bound; >= 1
  int vnodes_per_weight = 160;      // ring points per unit of weight
  int64_t max_sessions = 100000;    // affinity entries kept (least recently used dropped)
  int64_t min_match_blocks = 4;     // cache_aware: shorter matches fall back to least loaded
  int64_t history_blocks = 1 << 16; // cache_aware: block hashes remembered per target
  uint64_t random_seed = 0;         // random: 0 seeds from the clock
};

// ceil(load_factor x (total_in_flight + 1) x weight / total_weight), at least 1.
int64_t load_bound(int64_t total_in_flight, double weight, double total_weight, double load_factor);

// The bound of each target for one more request (0 for ineligible ones).
std::vector<int64_t> load_bounds(const std::vector<TargetLoad>& targets, double load_factor);

// Eligible, under max_concurrent and, when bounds is given, under its bound.
bool has_room(const TargetLoad& target, const std::vector<int64_t>* bounds = nullptr, size_t index = 0);

// Eligible target with room and the fewest in-flight per unit weight; ties go to the
// first at or after `rotate` (mod n). -1 when none.
int least_loaded_target(const std::vector<TargetLoad>& targets, size_t rotate = 0);

class RoutingPolicy {
 public:
  virtual ~RoutingPolicy() = default;
  virtual std::string_view name() const = 0;
  // Picks a target. Pure with respect to the loads; updates the policy's memory only in routed().
  virtual RoutingDecision choose(const RouteQuery& query, const std::vector<TargetLoad>& targets) = 0;
  // The request went to `target`: remember it (session affinity, prefix history).
  virtual void routed(const RouteQuery& query, int target) {}
  // The target went down: forget what it held (its cache is gone if it restarts).
  virtual void target_down(int target) {}
  // Sessions the policy remembers, per target (empty when it keeps none).
  virtual std::vector<int64_t> sessions_per_target() const { return {}; }
};

// names: session, cache_aware, least_loaded, round_robin, random. Error for others.
std::unique_ptr<RoutingPolicy> make_routing_policy(const std::string& name, const std::vector<HashRing::Target>& targets,
                                                   const PolicyOptions& options);
const std::vector<std::string>& routing_policy_names();

}  // namespace llmesh::route
