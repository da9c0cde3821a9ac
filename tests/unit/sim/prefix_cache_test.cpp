// Exact-state tests of the simulator's prefix cache and eviction policies.
#include <gtest/gtest.h>

#include <set>

#include "core/error.h"
#include "sim/prefix_cache.h"

namespace llmesh::sim {
namespace {

struct FakeSessions : SessionStatus {
  std::set<int> dead;
  std::set<std::pair<int, int>> queued;  // (session, worker)
  bool is_live(int session_id, int) const override { return !dead.count(session_id); }
  bool is_queued_on(int session_id, int worker_id) const override { return queued.count({session_id, worker_id}); }
};

TEST(SimPrefixCache, LruTrimsOldestEntryFromItsTail) {
  LruCachePolicy lru;
  FakeSessions sessions;
  WorkerCache cache(0, 1000, &lru);
  cache.set_tokens(private_cache_key(1, 0), 1, 0, 0, 400, /*now_s=*/1.0);
  cache.set_tokens(private_cache_key(2, 0), 2, 0, 0, 400, 2.0);
  EXPECT_EQ(cache.used_tokens(), 800);
  std::vector<EvictionRecord> evicted;
  ASSERT_TRUE(cache.make_room(300, {}, sessions, evicted));
  // Session 1 is older: it loses 100 tokens from its tail and keeps a 300-token prefix.
  ASSERT_EQ(evicted.size(), 1u);
  EXPECT_EQ(evicted[0].session_id, 1);
  EXPECT_EQ(evicted[0].tokens_evicted, 100);
  EXPECT_EQ(cache.cached_tokens(private_cache_key(1, 0)), 300);
  EXPECT_EQ(cache.cached_tokens(private_cache_key(2, 0)), 400);
  EXPECT_EQ(cache.free_tokens(), 300);
}

TEST(SimPrefixCache, PinnedAndProtectedEntriesSurvive) {
  LruCachePolicy lru;
  FakeSessions sessions;
  WorkerCache cache(0, 1000, &lru);
  CacheKey a = private_cache_key(1, 0), b = private_cache_key(2, 0), c = private_cache_key(3, 0);
  cache.set_tokens(a, 1, 0, 0, 300, 1.0);
  cache.set_tokens(b, 2, 0, 0, 300, 2.0);
  cache.set_tokens(c, 3, 0, 0, 300, 3.0);
  cache.pin(a);
  std::vector<EvictionRecord> evicted;
  // Needs 500 free (100 now): a is pinned, b protected, so only c's 300 can go: impossible.
  EXPECT_FALSE(cache.make_room(500, {b}, sessions, evicted));
  EXPECT_TRUE(evicted.empty());
  EXPECT_EQ(cache.used_tokens(), 900);
  ASSERT_TRUE(cache.make_room(400, {b}, sessions, evicted));
  EXPECT_EQ(cache.cached_tokens(a), 300);
  EXPECT_EQ(cache.cached_tokens(b), 300);
  EXPECT_EQ(cache.cached_tokens(c), 0);
  EXPECT_EQ(cache.find(c), nullptr);  // emptied entries disappear
  cache.unpin(a, 4.0);
  EXPECT_EQ(cache.evictable_tokens({}), 600);
}

TEST(SimPrefixCache, SharedPrefixGoesOnlyAfterItsChildren) {
  LruCachePolicy lru;
  FakeSessions sessions;
  WorkerCache cache(0, 1000, &lru);
  CacheKey shared = shared_cache_key(7);
  CacheKey child = private_cache_key(1, 0);
  cache.set_tokens(shared, -1, 0, 0, 200, /*now_s=*/0.0);  // oldest, but a parent
  cache.set_tokens(child, 1, 0, shared, 500, 5.0);
  std::vector<EvictionRecord> evicted;
  ASSERT_TRUE(cache.make_room(400, {}, sessions, evicted));
  // 300 were free: the child loses 100 although the shared prefix is older.
  EXPECT_EQ(cache.cached_tokens(shared), 200);
  EXPECT_EQ(cache.cached_tokens(child), 400);
  ASSERT_TRUE(cache.make_room(1000, {}, sessions, evicted));
  EXPECT_EQ(cache.used_tokens(), 0);
  EXPECT_EQ(evicted.back().key, shared);
}

TEST(SimPrefixCache, SessionAwareEvictsFinishedThenUnqueuedSessions) {
  SessionAwareCachePolicy policy;
  FakeSessions sessions;
  WorkerCache cache(3, 900, &policy);
  cache.set_tokens(private_cache_key(1, 0), 1, 0, 0, 300, 1.0);  // oldest, queued here
  cache.set_tokens(private_cache_key(2, 0), 2, 0, 0, 300, 2.0);  // live, idle
  cache.set_tokens(private_cache_key(3, 0), 3, 0, 0, 300, 3.0);  // newest, finished
  sessions.queued.insert({1, 3});
  sessions.dead.insert(3);
  std::vector<EvictionRecord> evicted;
  ASSERT_TRUE(cache.make_room(300, {}, sessions, evicted));
  EXPECT_EQ(evicted.back().session_id, 3);
  ASSERT_TRUE(cache.make_room(600, {}, sessions, evicted));
  EXPECT_EQ(evicted.back().session_id, 2);
  EXPECT_EQ(cache.cached_tokens(private_cache_key(1, 0)), 300);
  // LRU would have taken session 1 (the oldest) first.
  LruCachePolicy lru;
  WorkerCache plain(3, 900, &lru);
  plain.set_tokens(private_cache_key(1, 0), 1, 0, 0, 300, 1.0);
  plain.set_tokens(private_cache_key(2, 0), 2, 0, 0, 300, 2.0);
  plain.set_tokens(private_cache_key(3, 0), 3, 0, 0, 300, 3.0);
  std::vector<EvictionRecord> plain_evicted;
  ASSERT_TRUE(plain.make_room(300, {}, sessions, plain_evicted));
  EXPECT_EQ(plain_evicted.back().session_id, 1);
}

TEST(SimPrefixCache, GrowthPastCapacityThrows) {
  LruCachePolicy lru;
  WorkerCache cache(0, 100, &lru);
  EXPECT_THROW(cache.set_tokens(private_cache_key(1, 0), 1, 0, 0, 101, 0.0), Error);
}

TEST(SimHostTier, KeepsMostRecentCopiesWithinCapacity) {
  HostTier host(1000);
  host.store(1, 600, 1.0);
  host.store(2, 600, 2.0);  // pushes out 200 of key 1's tail
  EXPECT_EQ(host.used_tokens(), 1000);
  EXPECT_EQ(host.stored_tokens(1), 400);
  EXPECT_EQ(host.stored_tokens(2), 600);
  HostTier off(0);
  off.store(1, 600, 1.0);
  EXPECT_EQ(off.stored_tokens(1), 0);
}

}  // namespace
}  // namespace llmesh::sim
