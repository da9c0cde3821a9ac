#include "sim/router.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace llmesh::sim {

uint64_t mix_hash(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

PinnedRouter::PinnedRouter(int num_workers, int virtual_nodes, double load_bound_factor, uint64_t seed)
    : sessions_per_worker_(num_workers, 0), load_bound_factor_(load_bound_factor), seed_(seed) {
  for (int w = 0; w < num_workers; ++w) {
    for (int v = 0; v < virtual_nodes; ++v) {
      ring_.push_back({mix_hash(seed ^ mix_hash(static_cast<uint64_t>(w) << 32 | static_cast<uint64_t>(v))), w});
    }
  }
  std::sort(ring_.begin(), ring_.end());
}

int PinnedRouter::pinned_worker(int session_id) const {
  auto it = pinned_.find(session_id);
  return it == pinned_.end() ? -1 : it->second;
}

size_t PinnedRouter::route(int session_id, const std::vector<RouteCandidate>& candidates) {
  check(candidates.size() == sessions_per_worker_.size(), "sim: pinned router built for {} workers, asked about {}",
        sessions_per_worker_.size(), candidates.size());
  if (auto it = pinned_.find(session_id); it != pinned_.end()) return static_cast<size_t>(it->second);
  const int num_workers = static_cast<int>(sessions_per_worker_.size());
  const int bound = static_cast<int>(std::ceil(load_bound_factor_ * (num_live_sessions_ + 1) / num_workers));
  uint64_t point = mix_hash(seed_ ^ mix_hash(0x5e55105ULL + static_cast<uint64_t>(session_id)));
  auto start = std::lower_bound(ring_.begin(), ring_.end(), std::make_pair(point, 0));
  size_t first = static_cast<size_t>(start - ring_.begin());
  int chosen = -1;
  for (size_t step = 0; step < ring_.size(); ++step) {
    int worker = ring_[(first + step) % ring_.size()].second;
    if (sessions_per_worker_[worker] < bound) {
      chosen = worker;
      break;
    }
  }
  check(chosen >= 0, "sim: bounded-load hashing found no worker (bound {})", bound);
  pinned_[session_id] = chosen;
  sessions_per_worker_[chosen]++;
  num_live_sessions_++;
  return static_cast<size_t>(chosen);
}

void PinnedRouter::end_session(int session_id) {
  auto it = pinned_.find(session_id);
  if (it == pinned_.end()) return;
  sessions_per_worker_[it->second]--;
  num_live_sessions_--;
  pinned_.erase(it);
}

size_t RoundRobinRouter::route(int, const std::vector<RouteCandidate>& candidates) {
  return static_cast<size_t>(next_++ % candidates.size());
}

size_t RandomRouter::route(int, const std::vector<RouteCandidate>& candidates) {
  return static_cast<size_t>(rng_() % candidates.size());
}

size_t LeastLoadedRouter::route(int, const std::vector<RouteCandidate>& candidates) {
  size_t best = 0;
  for (size_t i = 1; i < candidates.size(); ++i) {
    if (candidates[i].num_outstanding_requests < candidates[best].num_outstanding_requests) best = i;
  }
  return best;
}

size_t CacheAwareRouter::route(int, const std::vector<RouteCandidate>& candidates) {
  size_t least = 0;
  size_t best = 0;
  for (size_t i = 1; i < candidates.size(); ++i) {
    const RouteCandidate& c = candidates[i];
    if (c.num_outstanding_requests < candidates[least].num_outstanding_requests) least = i;
    const RouteCandidate& b = candidates[best];
    if (c.cached_prompt_tokens > b.cached_prompt_tokens ||
        (c.cached_prompt_tokens == b.cached_prompt_tokens && c.num_outstanding_requests < b.num_outstanding_requests)) {
      best = i;
    }
  }
  int gap = candidates[best].num_outstanding_requests - candidates[least].num_outstanding_requests;
  if (candidates[best].cached_prompt_tokens == 0 || gap > balance_threshold_) return least;
  return best;
}

std::unique_ptr<Router> make_router(const RoutingConfig& config, int num_workers, uint64_t seed) {
  switch (config.policy) {
    case RoutingPolicy::Pinned:
      return std::make_unique<PinnedRouter>(num_workers, config.virtual_nodes, config.load_bound_factor, seed);
    case RoutingPolicy::RoundRobin: return std::make_unique<RoundRobinRouter>();
    case RoutingPolicy::Random: return std::make_unique<RandomRouter>(seed);
    case RoutingPolicy::LeastLoaded: return std::make_unique<LeastLoadedRouter>();
    case RoutingPolicy::CacheAware: return std::make_unique<CacheAwareRouter>(config.balance_threshold);
  }
  fail("sim: unknown routing policy");
}

}  // namespace llmesh::sim
