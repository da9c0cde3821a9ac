#include "kv/block_allocator.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "kv/kv_pool.h"

namespace llmesh {
namespace {

TEST(BlockAllocator, AllocatesInFifoOrderAndReusesOldestFreed) {
  BlockAllocator a(4);
  EXPECT_EQ(a.allocate(), 0);
  EXPECT_EQ(a.allocate(), 1);
  EXPECT_EQ(a.allocate(), 2);
  a.release(1);
  a.release(0);
  EXPECT_EQ(a.num_free_blocks(), 3);
  EXPECT_EQ(a.allocate(), 3);  // never-used blocks come first, then the oldest freed
  EXPECT_EQ(a.allocate(), 1);
  EXPECT_EQ(a.allocate(), 0);
  EXPECT_EQ(a.allocate(), -1);
}

TEST(BlockAllocator, SharedBlockFreedByLastHolder) {
  BlockAllocator a(2);
  int32_t b = a.allocate();
  a.share(b);
  EXPECT_EQ(a.ref_count(b), 2);
  a.release(b);
  EXPECT_EQ(a.num_free_blocks(), 1);
  a.release(b);
  EXPECT_EQ(a.num_free_blocks(), 2);
  EXPECT_THROW(a.release(b), Error);
}

TEST(BlockTable, ReserveMapsPositionsToSlots) {
  BlockAllocator a(3);
  a.allocate();  // block 0 taken by someone else
  BlockTable t(4);
  ASSERT_TRUE(t.reserve(a, 5));  // needs 2 blocks: 1, 2
  EXPECT_EQ(t.block_ids(), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(t.slot(0), 4);
  EXPECT_EQ(t.slot(3), 7);
  EXPECT_EQ(t.slot(4), 8);
  EXPECT_FALSE(t.reserve(a, 9));  // would need a third block: none free, table unchanged
  EXPECT_EQ(t.capacity_tokens(), 8);
  t.release_all(a);
  EXPECT_EQ(a.num_free_blocks(), 2);
}

TEST(KvPool, LayersDoNotOverlap) {
  KvCacheShape shape{3, 2, 8, 4, 5};
  KvPool pool(shape);
  const int64_t layer_floats = 5 * 4 * 2 * 8;
  EXPECT_EQ(pool.v(0) - pool.k(0), layer_floats);
  EXPECT_EQ(pool.k(1) - pool.v(0), layer_floats);
  pool.v(2)[layer_floats - 1] = 1.0f;  // last float is writable
  EXPECT_EQ(pool.num_bytes(), size_t(3 * 2 * layer_floats * 4));
}

}  // namespace
}  // namespace llmesh
