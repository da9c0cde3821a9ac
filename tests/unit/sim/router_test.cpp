#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "sim/router.h"

namespace llmesh::sim {
namespace {

std::vector<RouteCandidate> candidates(int n) {
  std::vector<RouteCandidate> c(n);
  for (int i = 0; i < n; ++i) c[i].worker_id = i;
  return c;
}

TEST(SimRouter, PinnedIsStickyAndRespectsTheLoadBound) {
  const int num_workers = 16, num_sessions = 32;
  PinnedRouter router(num_workers, 64, 1.0, /*seed=*/3);
  auto c = candidates(num_workers);
  std::map<int, size_t> first;
  for (int s = 0; s < num_sessions; ++s) first[s] = router.route(s, c);
  for (int s = 0; s < num_sessions; ++s) EXPECT_EQ(router.route(s, c), first[s]);  // sticky
  // Bound factor 1.0: exactly two sessions per worker.
  for (int load : router.sessions_per_worker()) EXPECT_EQ(load, 2);
  // A finished session frees its slot; a new session may take it.
  router.end_session(0);
  EXPECT_EQ(router.pinned_worker(0), -1);
  size_t next = router.route(100, c);
  EXPECT_EQ(next, first[0]);
}

TEST(SimRouter, PinnedLooseBoundStaysWithinFactor) {
  PinnedRouter router(8, 64, 1.25, 9);
  auto c = candidates(8);
  for (int s = 0; s < 80; ++s) router.route(s, c);
  int bound = static_cast<int>(std::ceil(1.25 * 80 / 8));
  for (int load : router.sessions_per_worker()) EXPECT_LE(load, bound);
}

TEST(SimRouter, RoundRobinCycles) {
  RoundRobinRouter router;
  auto c = candidates(3);
  std::vector<size_t> picks;
  for (int i = 0; i < 6; ++i) picks.push_back(router.route(/*session_id=*/7, c));
  EXPECT_EQ(picks, (std::vector<size_t>{0, 1, 2, 0, 1, 2}));
}

TEST(SimRouter, LeastLoadedAndCacheAware) {
  auto c = candidates(4);
  c[0].num_outstanding_requests = 3;
  c[1].num_outstanding_requests = 1;
  c[2].num_outstanding_requests = 1;
  c[3].num_outstanding_requests = 2;
  LeastLoadedRouter least;
  EXPECT_EQ(least.route(0, c), 1u);  // ties go to the lowest index
  c[3].cached_prompt_tokens = 5000;
  c[0].cached_prompt_tokens = 4000;
  CacheAwareRouter aware(/*balance_threshold=*/1);
  EXPECT_EQ(aware.route(0, c), 3u);  // best match, load gap 1 <= threshold
  c[3].num_outstanding_requests = 4;
  EXPECT_EQ(aware.route(0, c), 1u);  // gap 3 > threshold: least loaded
}

TEST(SimRouter, RandomIsSeeded) {
  auto c = candidates(16);
  RandomRouter a(42), b(42);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(a.route(i, c), b.route(i, c));
}

}  // namespace
}  // namespace llmesh::sim
