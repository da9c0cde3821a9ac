// Picks the worker a request goes to.
//
// The simulator hands a Router the request's session and, for each candidate
// worker, its load and how many of the request's prompt tokens it holds in
// cache. Policies: pinned (consistent hashing with bounded load; a session
// stays where it first landed), round robin, random, least loaded, and cache
// aware (best cache match unless the load gap grows too wide). Another policy
// (e.g. a real gateway's) plugs in by implementing Router.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <unordered_map>
#include <vector>

#include "sim/config.h"

namespace llmesh::sim {

struct RouteCandidate {
  int worker_id = 0;
  int num_outstanding_requests = 0;  // queued + running
  int64_t cached_prompt_tokens = 0;  // filled only when Router::needs_cache_lookup()
};

class Router {
 public:
  virtual ~Router() = default;
  virtual bool needs_cache_lookup() const { return false; }
  // Returns an index into `candidates` (never empty).
  virtual size_t route(int session_id, const std::vector<RouteCandidate>& candidates) = 0;
  // A session sent its last turn; pinned routing releases its slot.
  virtual void end_session(int session_id) {}
};

// Consistent hashing with bounded load: a session hashes to a point on a ring
// of virtual nodes and takes the first worker clockwise whose number of live
// pinned sessions is below ceil(load_bound_factor * (live + 1) / workers).
class PinnedRouter : public Router {
 public:
  PinnedRouter(int num_workers, int virtual_nodes, double load_bound_factor, uint64_t seed);
  size_t route(int session_id, const std::vector<RouteCandidate>& candidates) override;
  void end_session(int session_id) override;
  int pinned_worker(int session_id) const;  // -1 when not pinned
  const std::vector<int>& sessions_per_worker() const { return sessions_per_worker_; }

 private:
  std::vector<std::pair<uint64_t, int>> ring_;  // (point, worker position), sorted
  std::unordered_map<int, int> pinned_;         // session -> worker position
  std::vector<int> sessions_per_worker_;
  int num_live_sessions_ = 0;
  double load_bound_factor_;
  uint64_t seed_;
};

class RoundRobinRouter : public Router {
 public:
  size_t route(int session_id, const std::vector<RouteCandidate>& candidates) override;

 private:
  uint64_t next_ = 0;
};

class RandomRouter : public Router {
 public:
  explicit RandomRouter(uint64_t seed) : rng_(seed) {}
  size_t route(int session_id, const std::vector<RouteCandidate>& candidates) override;

 private:
  std::mt19937_64 rng_;
};

// Fewest outstanding requests; ties to the lowest worker id.
class LeastLoadedRouter : public Router {
 public:
  size_t route(int session_id, const std::vector<RouteCandidate>& candidates) override;
};

// Most cached prompt tokens, unless that worker has more than
// `balance_threshold` outstanding requests above the least-loaded one; then
// least loaded. Ties to fewer outstanding, then lowest worker id.
class CacheAwareRouter : public Router {
 public:
  explicit CacheAwareRouter(int balance_threshold) : balance_threshold_(balance_threshold) {}
  bool needs_cache_lookup() const override { return true; }
  size_t route(int session_id, const std::vector<RouteCandidate>& candidates) override;

 private:
  int balance_threshold_;
};

std::unique_ptr<Router> make_router(const RoutingConfig& config, int num_workers, uint64_t seed);

// A well-mixed 64-bit hash (splitmix64 finalizer); the simulator's only hash.
uint64_t mix_hash(uint64_t x);

}  // namespace llmesh::sim
