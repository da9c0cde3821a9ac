// Exact-state tests of the KV cache manager: prefix lookup, block ids, ref
// counts, eviction order, the eviction listener and the events it emits; the
// namespace; one block's K/V copied out and back as a unit.
#include "kv/kv_cache_manager.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kv_test_util.h"

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/cpu/cpu_backend.h"
#include "kv/kv_pool.h"

namespace llmesh {

using kv::BlockHash;
using kv::BlockTable;
using kv::cache_namespace;
using kv::CachedBlockRef;
using kv::hash_block;
using kv::KvCacheConfig;
using kv::KvCacheListener;
using kv::KvCacheManager;
using kv::KvCacheShape;
using kv::KvEvent;
using kv::KvEventType;
using kv::KvPool;
using kv::PrefixMatch;

namespace {

using testing::toks;

struct Recorder : KvCacheListener {
  void on_evict(const CachedBlockRef& b, int64_t /*now_ms*/) override {
    evicted.push_back(b.block_id);
    evicted_tokens.emplace_back(b.tokens.begin(), b.tokens.end());
  }
  void on_event(const KvEvent& e) override { events.push_back(e); }
  std::vector<int32_t> evicted;
  std::vector<std::vector<int32_t>> evicted_tokens;
  std::vector<KvEvent> events;
};

constexpr BlockHash kNs = 77;

KvCacheManager make(int64_t blocks, bool cache = true) { return KvCacheManager(KvCacheConfig{blocks, 2, cache, kNs}); }

TEST(KvCacheManager, ComputedFullBlocksBecomeHitsWithChainedKeys) {
  KvCacheManager kv(KvCacheConfig{4, 2, true, kNs});
  Recorder rec;
  kv.add_listener(&rec);
  const auto t = toks(10, 5);  // 2 full blocks + 1 token
  BlockTable a(2);
  ASSERT_TRUE(kv.reserve(a, 5));
  EXPECT_EQ(a.block_ids(), (std::vector<int32_t>{0, 1, 2}));
  kv.cache_full_blocks(a, t, 5);
  const BlockHash h0 = hash_block(kNs, std::span(t).subspan(0, 2));
  const BlockHash h1 = hash_block(h0, std::span(t).subspan(2, 2));
  EXPECT_EQ(a.hashes(), (std::vector<BlockHash>{h0, h1}));
  ASSERT_EQ(rec.events.size(), 2u);
  EXPECT_EQ(rec.events[0].type, KvEventType::BlockStored);
  EXPECT_EQ(rec.events[0].hash, h0);
  EXPECT_EQ(rec.events[0].parent_hash, kNs);
  EXPECT_EQ(rec.events[1].hash, h1);
  EXPECT_EQ(rec.events[1].parent_hash, h0);
  EXPECT_EQ(rec.events[1].block_id, 1);
  kv.cache_full_blocks(a, t, 5);  // idempotent
  EXPECT_EQ(rec.events.size(), 2u);

  // Another sequence with the same first 4 tokens and a different tail.
  auto other = toks(10, 4);
  other.push_back(99);
  PrefixMatch m = kv.find_prefix(other, 2);
  EXPECT_EQ(m.hashes, (std::vector<BlockHash>{h0, h1}));
  EXPECT_EQ(m.block_ids, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(kv.find_prefix(other, 1).num_blocks(), 1);  // capped by max_blocks
  BlockTable b(2);
  kv.acquire(m, other, b);
  EXPECT_EQ(kv.pool().ref_count(0), 2);
  EXPECT_EQ(kv.pool().ref_count(1), 2);
  EXPECT_EQ(b.hashes(), a.hashes());
  kv.release(a);
  kv.release(b);
  EXPECT_EQ(kv.num_free_blocks(), 4);
  EXPECT_EQ(kv.num_cached_blocks(), 2);
  EXPECT_TRUE(rec.evicted.empty());
}

TEST(KvCacheManager, EvictionGoesThroughTheListenerOldestReleasedFirst) {
  KvCacheManager kv = make(3);
  Recorder rec;
  kv.add_listener(&rec);
  BlockTable a(2), b(2);
  ASSERT_TRUE(kv.reserve(a, 2));  // block 0
  ASSERT_TRUE(kv.reserve(b, 2));  // block 1
  kv.cache_full_blocks(a, toks(0, 2), 2);
  kv.cache_full_blocks(b, toks(50, 2), 2);
  kv.release(b);  // released first: evicted first
  kv.release(a);
  rec.events.clear();
  BlockTable c(2);
  ASSERT_TRUE(kv.reserve(c, 4));  // the never-used block 2, then the LRU cached block 1
  EXPECT_EQ(c.block_ids(), (std::vector<int32_t>{2, 1}));
  EXPECT_EQ(rec.evicted, (std::vector<int32_t>{1}));
  EXPECT_EQ(rec.evicted_tokens[0], toks(50, 2));
  ASSERT_EQ(rec.events.size(), 1u);
  EXPECT_EQ(rec.events[0].type, KvEventType::BlockRemoved);
  EXPECT_EQ(rec.events[0].hash, hash_block(kNs, toks(50, 2)));
  EXPECT_EQ(kv.num_evictions(), 1);
  EXPECT_EQ(kv.find_prefix(toks(50, 2), 1).num_blocks(), 0);
  EXPECT_EQ(kv.find_prefix(toks(0, 2), 1).block_ids, (std::vector<int32_t>{0}));
  EXPECT_FALSE(kv.reserve(c, 8));  // 2 more blocks, 1 left: unchanged
  EXPECT_EQ(c.num_blocks(), 2);
}

TEST(KvCacheManager, FlushDropsUnheldBlocksWithEventsButNoEviction) {
  KvCacheManager kv = make(4);
  Recorder rec;
  kv.add_listener(&rec);
  BlockTable a(2), b(2);
  ASSERT_TRUE(kv.reserve(a, 2));
  ASSERT_TRUE(kv.reserve(b, 2));
  kv.cache_full_blocks(a, toks(0, 2), 2);
  kv.cache_full_blocks(b, toks(8, 2), 2);
  kv.release(a);
  rec.events.clear();
  EXPECT_EQ(kv.flush(), 1);  // b still holds its block: it stays cached
  EXPECT_TRUE(rec.evicted.empty());
  ASSERT_EQ(rec.events.size(), 1u);
  EXPECT_EQ(rec.events[0].type, KvEventType::BlockRemoved);
  EXPECT_EQ(rec.events[0].block_id, 0);
  EXPECT_EQ(kv.num_cached_blocks(), 1);
  EXPECT_EQ(kv.num_evictions(), 0);
}

TEST(KvCacheManager, CacheOffNeverHashes) {
  KvCacheManager kv = make(2, /*cache=*/false);
  Recorder rec;
  kv.add_listener(&rec);
  BlockTable a(2);
  ASSERT_TRUE(kv.reserve(a, 4));
  kv.cache_full_blocks(a, toks(0, 4), 4);
  EXPECT_TRUE(a.hashes().empty());
  EXPECT_TRUE(rec.events.empty());
  EXPECT_EQ(kv.num_cached_blocks(), 0);
  EXPECT_EQ(kv.find_prefix(toks(0, 4), 2).num_blocks(), 0);
}

TEST(KvCacheManager, DuplicateContentIsCachedOnce) {
  KvCacheManager kv = make(4);
  Recorder rec;
  kv.add_listener(&rec);
  BlockTable a(2), b(2);
  ASSERT_TRUE(kv.reserve(a, 2));
  ASSERT_TRUE(kv.reserve(b, 2));
  kv.cache_full_blocks(a, toks(0, 2), 2);
  kv.cache_full_blocks(b, toks(0, 2), 2);  // computed twice concurrently: the first copy stays the cached one
  EXPECT_EQ(rec.events.size(), 1u);
  EXPECT_EQ(b.hashes(), a.hashes());
  EXPECT_EQ(kv.find_prefix(toks(0, 2), 1).block_ids, (std::vector<int32_t>{0}));
}

TEST(CacheNamespace, DependsOnIdentityLayoutAndDtypeOnly) {
  const BlockHash base = cache_namespace("0123abcd", "qwen3", 16, "f32");
  EXPECT_EQ(base, cache_namespace("0123abcd", "qwen3", 16, "f32"));
  EXPECT_NE(base, cache_namespace("0123abce", "qwen3", 16, "f32"));
  EXPECT_NE(base, cache_namespace("0123abcd", "llama", 16, "f32"));
  EXPECT_NE(base, cache_namespace("0123abcd", "qwen3", 32, "f32"));
  EXPECT_NE(base, cache_namespace("0123abcd", "qwen3", 16, "bf16"));
}

TEST(KvCacheManager, PinnedPrefixOutlivesUnpinnedOnesUntilItsTtl) {
  KvCacheManager kv(KvCacheConfig{4, 2, true, kNs});
  int64_t now = 0;
  kv.set_clock([&] { return now; });
  const auto pinned = toks(10, 4), other = toks(50, 4);
  BlockTable a(2), b(2);
  ASSERT_TRUE(kv.reserve(a, 4));
  kv.cache_full_blocks(a, pinned, 4);
  kv.pin(a, 2, 300);  // cache_control ttl 5m
  kv.release(a);
  ASSERT_TRUE(kv.reserve(b, 4));
  kv.cache_full_blocks(b, other, 4);
  kv.release(b);  // b is more recently used than a...
  EXPECT_EQ(kv.num_pinned_blocks(), 2);
  BlockTable c(2);
  ASSERT_TRUE(kv.reserve(c, 4));  // ...but a is pinned: b's blocks are evicted
  kv.release(c);
  EXPECT_EQ(kv.find_prefix(pinned, 2).num_blocks(), 2);
  EXPECT_EQ(kv.find_prefix(other, 2).num_blocks(), 0);
  now = 300 * 1000;  // the TTL ran out
  BlockTable d(2);
  ASSERT_TRUE(kv.reserve(d, 4));
  EXPECT_EQ(kv.num_pinned_blocks(), 0);
  EXPECT_EQ(kv.find_prefix(pinned, 2).num_blocks(), 0);
  kv.release(d);
}

// One block's K/V read out, the pool scribbled over, the block written back:
// attention over it gives bit-identical output (and differs while scribbled).
TEST(KvPool, BlockCopiedOutAndBackGivesIdenticalAttention) {
  const KvCacheShape shape{3, 2, 8, 4, 6, DType::F32};  // 3 layers, 2 kv heads, head_dim 8, blocks of 4, 6 blocks
  KvPool pool(shape);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  for (int64_t layer = 0; layer < shape.num_layers; ++layer) {
    for (int64_t i = 0; i < shape.num_blocks * shape.block_size * shape.num_kv_heads * shape.head_dim; ++i) {
      static_cast<float*>(pool.k(layer))[i] = normal(rng);
      static_cast<float*>(pool.v(layer))[i] = normal(rng);
    }
  }
  // One sequence of 7 positions in blocks {4, 1}; one query at position 6.
  const std::vector<int32_t> blocks = {4, 1};
  const int32_t position = 6, seq = 0;
  const int32_t* tables[] = {blocks.data()};
  kernels::AttentionBatch batch{1, &position, &seq, tables};
  const int64_t num_heads = 4;
  std::vector<float> q(size_t(num_heads * shape.head_dim));
  for (float& x : q) x = normal(rng);
  ThreadPool threads(1);
  kernels::CpuBackend backend(threads);
  auto attend = [&] {
    std::vector<float> out;
    for (int64_t layer = 0; layer < shape.num_layers; ++layer) {
      std::vector<float> o(q.size());
      kernels::KvLayerView view{pool.k(layer),     pool.v(layer),  shape.block_size,
                                shape.num_kv_heads, shape.head_dim, shape.dtype};
      backend.paged_attention(q.data(), o.data(), batch, view, num_heads, 0.35f, nullptr);
      out.insert(out.end(), o.begin(), o.end());
    }
    return out;
  };
  const std::vector<float> before = attend();

  std::vector<std::byte> saved(size_t(shape.bytes_per_block()));
  pool.read_block(1, saved);
  std::vector<std::byte> junk(saved.size(), std::byte{0x3f});
  pool.write_block(1, junk);
  EXPECT_NE(attend(), before);
  pool.write_block(1, saved);
  EXPECT_EQ(attend(), before);

  std::vector<std::byte> wrong_size(saved.size() - 4);
  EXPECT_THROW(pool.read_block(1, wrong_size), Error);
  EXPECT_THROW(pool.read_block(6, saved), Error);
}

}  // namespace
}  // namespace llmesh
