// Exact-state tests of the block pool and prefix cache: block ids, ref counts,
// free-list (eviction) order.
#include "kv/block_pool.h"

#include <gtest/gtest.h>

#include <vector>

#include "kv_test_util.h"

#include "core/error.h"
#include "kv/kv_pool.h"

namespace llmesh {

using kv::BlockHash;
using kv::BlockPool;
using kv::BlockTable;
using kv::hash_block;
using kv::KvCacheShape;
using kv::KvPool;

namespace {

using testing::toks;

TEST(BlockPool, AllocatesInOrderAndReusesOldestFreed) {
  BlockPool p(4, 2);
  EXPECT_EQ(p.allocate(), 0);
  EXPECT_EQ(p.allocate(), 1);
  EXPECT_EQ(p.allocate(), 2);
  p.release(1);
  p.release(0);
  EXPECT_EQ(p.num_free_blocks(), 3);
  EXPECT_EQ(p.allocate(), 3);  // never-used blocks first, then the oldest freed
  EXPECT_EQ(p.allocate(), 1);
  EXPECT_EQ(p.allocate(), 0);
  EXPECT_EQ(p.allocate(), -1);
}

TEST(BlockPool, SharedBlockFreedByLastHolder) {
  BlockPool p(2, 2);
  int32_t b = p.allocate();
  p.share(b);
  EXPECT_EQ(p.ref_count(b), 2);
  p.release(b);
  EXPECT_EQ(p.num_free_blocks(), 1);
  p.release(b);
  EXPECT_EQ(p.num_free_blocks(), 2);
  EXPECT_THROW(p.release(b), Error);
}

TEST(BlockPool, CachedBlockSurvivesReleaseAndIsHitAgain) {
  BlockPool p(3, 2);
  auto t = toks(10, 2);
  BlockHash h = hash_block(0, t);
  int32_t b = p.allocate();
  p.cache(b, h, 0, t);
  p.release(b);
  EXPECT_EQ(p.num_cached_blocks(), 1);
  EXPECT_EQ(p.num_free_blocks(), 3);  // cached blocks are still allocatable
  EXPECT_EQ(p.lookup(h, t), b);
  p.share(b);  // cached -> held, leaves the free list
  EXPECT_EQ(p.ref_count(b), 1);
  EXPECT_EQ(p.num_free_blocks(), 2);
}

TEST(BlockPool, HitIsRecheckedTokenByToken) {
  BlockPool p(2, 2);
  auto t = toks(1, 2);
  int32_t b = p.allocate();
  p.cache(b, 42, 0, t);
  EXPECT_EQ(p.lookup(42, t), b);
  EXPECT_EQ(p.lookup(42, toks(5, 2)), -1);  // same key, other tokens: a collision is a miss
  EXPECT_EQ(p.lookup(43, t), -1);
}

TEST(BlockPool, EvictsLeastRecentlyReleasedCachedBlockFirst) {
  BlockPool p(3, 1);
  int32_t a = p.allocate(), b = p.allocate(), c = p.allocate();
  p.cache(a, 1, 0, toks(1, 1));
  p.cache(b, 2, 0, toks(2, 1));
  p.cache(c, 3, 0, toks(3, 1));
  p.release(b);  // free list: b, c, a
  p.release(c);
  p.release(a);
  EXPECT_EQ(p.allocate(), b);  // evicts b
  EXPECT_EQ(p.lookup(2, toks(2, 1)), -1);
  EXPECT_EQ(p.lookup(3, toks(3, 1)), c);
  EXPECT_EQ(p.num_cached_blocks(), 2);
}

TEST(BlockPool, FlushDropsOnlyUnreferencedCachedBlocks) {
  BlockPool p(3, 1);
  int32_t a = p.allocate(), b = p.allocate();
  p.cache(a, 1, 0, toks(1, 1));
  p.cache(b, 2, 0, toks(2, 1));
  p.release(a);
  EXPECT_EQ(p.flush(), 1);
  EXPECT_EQ(p.lookup(1, toks(1, 1)), -1);
  EXPECT_EQ(p.lookup(2, toks(2, 1)), b);  // still held: stays cached
}

TEST(BlockPool, PinnedCachedBlocksAreEvictedAfterEveryUnpinnedOne) {
  BlockPool p(3, 1);
  const int32_t a = p.allocate(), b = p.allocate(), c = p.allocate();
  p.cache(a, 1, 0, toks(1, 1));
  p.cache(b, 2, 0, toks(2, 1));
  p.cache(c, 3, 0, toks(3, 1));
  p.pin(a, 1000);  // pinned while held
  p.release(a);
  p.release(b);
  p.release(c);
  EXPECT_EQ(p.num_free_blocks(), 3);
  EXPECT_EQ(p.num_pinned_blocks(), 1);
  EXPECT_EQ(p.allocate(), b);  // a is the least recently released, but pinned
  EXPECT_EQ(p.allocate(), c);
  EXPECT_EQ(p.lookup(1, toks(1, 1)), a);
  EXPECT_EQ(p.allocate(), a);  // nothing else is left: a pin never refuses an allocation
  EXPECT_EQ(p.allocate(), -1);
}

TEST(BlockPool, ALapsedPinIsTheFirstToGo) {
  BlockPool p(3, 1);
  const int32_t a = p.allocate(), b = p.allocate(), c = p.allocate();
  p.cache(a, 1, 0, toks(1, 1));
  p.cache(b, 2, 0, toks(2, 1));
  p.cache(c, 3, 0, toks(3, 1));
  p.release(b);
  p.release(c);
  p.release(a);
  p.pin(a, 500);  // pinned while cached: moves to the pinned list
  EXPECT_EQ(p.num_pinned_blocks(), 1);
  p.expire_pins(499);
  EXPECT_EQ(p.num_pinned_blocks(), 1);
  p.expire_pins(500);
  EXPECT_EQ(p.num_pinned_blocks(), 0);
  EXPECT_EQ(p.num_free_blocks(), 3);
  EXPECT_EQ(p.allocate(), a);  // a lapsed promise goes before b, the least recently used
  EXPECT_EQ(p.allocate(), b);
}

TEST(BlockPool, FlushDropsPinnedCachedBlocksToo) {
  BlockPool p(2, 1);
  const int32_t a = p.allocate();
  p.cache(a, 1, 0, toks(1, 1));
  p.pin(a, 1000);
  p.release(a);
  EXPECT_EQ(p.flush(), 1);
  EXPECT_EQ(p.num_pinned_blocks(), 0);
  EXPECT_EQ(p.num_free_blocks(), 2);
  EXPECT_EQ(p.lookup(1, toks(1, 1)), -1);
}

TEST(BlockHash, ChainsThePrefix) {
  auto t = toks(7, 4);
  EXPECT_EQ(hash_block(1, t), hash_block(1, t));
  EXPECT_NE(hash_block(1, t), hash_block(2, t));  // same tokens after another prefix
  EXPECT_NE(hash_block(1, t), hash_block(1, toks(8, 4)));
}

TEST(BlockTable, ReserveMapsPositionsToSlots) {
  BlockPool p(3, 4);
  p.allocate();  // block 0 taken by someone else
  BlockTable t(4);
  ASSERT_TRUE(t.reserve(p, 5));  // needs 2 blocks: 1, 2
  EXPECT_EQ(t.block_ids(), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(t.slot(0), 4);
  EXPECT_EQ(t.slot(3), 7);
  EXPECT_EQ(t.slot(4), 8);
  EXPECT_FALSE(t.reserve(p, 9));  // a third block: none free, table unchanged
  EXPECT_EQ(t.capacity_tokens(), 8);
  t.release_all(p);
  EXPECT_EQ(p.num_free_blocks(), 2);
}

TEST(KvPool, LayersDoNotOverlap) {
  for (DType dtype : {DType::F32, DType::F16}) {
    const KvCacheShape shape{3, 2, 8, 4, 5, dtype};
    KvPool pool(shape);
    const int64_t layer_bytes = 5 * 4 * 2 * 8 * int64_t(dtype_block_bytes(dtype));
    auto* k0 = static_cast<std::byte*>(pool.k(0));
    EXPECT_EQ(static_cast<std::byte*>(pool.v(0)) - k0, layer_bytes);
    EXPECT_EQ(static_cast<std::byte*>(pool.k(1)) - static_cast<std::byte*>(pool.v(0)), layer_bytes);
    static_cast<std::byte*>(pool.v(2))[layer_bytes - 1] = std::byte{1};  // the last byte is writable
    EXPECT_EQ(pool.num_bytes(), size_t(3 * 2 * layer_bytes));
  }
}

// Multi-head latent attention: one row per position and layer, the values inside it.
TEST(KvPool, LatentRowsHoldTheValuesToo) {
  const KvCacheShape shape{3, 1, 96, 4, 5, DType::F16, 64};
  EXPECT_EQ(shape.bytes_per_token(), 3 * 96 * 2);
  EXPECT_EQ(shape.value_dim(), 64);
  KvPool pool(shape);
  const int64_t layer_bytes = 5 * 4 * 96 * 2;
  EXPECT_EQ(pool.v(1), pool.k(1));
  EXPECT_EQ(static_cast<std::byte*>(pool.k(2)) - static_cast<std::byte*>(pool.k(1)), layer_bytes);
  EXPECT_EQ(pool.num_bytes(), size_t(3 * layer_bytes));
  // A block moves as one unit (what the host and disk tiers store): every layer's rows.
  std::vector<std::byte> block(size_t(pool.bytes_per_block()));
  for (size_t i = 0; i < block.size(); ++i) block[i] = std::byte(i * 7 + 1);
  pool.write_block(3, block);
  EXPECT_EQ(static_cast<std::byte*>(pool.k(2))[3 * 4 * 96 * 2], block[2 * 4 * 96 * 2]);
  std::vector<std::byte> back(block.size());
  pool.read_block(3, back);
  EXPECT_EQ(back, block);
  // values wider than the rows, or not whole q8_0 blocks, are refused
  EXPECT_THROW(KvPool(KvCacheShape{1, 1, 96, 4, 2, DType::F16, 128}), Error);
  EXPECT_THROW(KvPool(KvCacheShape{1, 1, 96, 4, 2, DType::Q8_0, 48}), Error);
}

TEST(KvPool, Q8_0NeedsHeadDimMultipleOf32) {
  EXPECT_THROW(KvPool(KvCacheShape{1, 1, 48, 4, 2, DType::Q8_0}), Error);
  KvPool pool(KvCacheShape{1, 1, 64, 4, 2, DType::Q8_0});
  EXPECT_EQ(pool.num_bytes(), size_t(2 * 2 * 4 * 2 * 34));
}

}  // namespace
}  // namespace llmesh
