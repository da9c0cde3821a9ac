// Exact-state tests of the host-RAM tier: LRU order, the byte budget, what is
// handed on when it no longer fits, exclusive take.
#include "kv/host_tier.h"

#include <gtest/gtest.h>

#include "kv_test_util.h"

namespace llmesh {

using kv::BlockRecord;
using kv::HostTier;
using testing::toks;

namespace {

// 2 tokens (8 bytes) + 92 payload bytes = 100 bytes.
BlockRecord rec(kv::BlockHash h) {
  return BlockRecord{h, h - 1, toks(int32_t(h), 2), std::vector<std::byte>(92, std::byte(h))};
}

TEST(HostTier, KeepsTheMostRecentWithinTheBudgetAndHandsTheRestOn) {
  HostTier t(300);
  std::vector<kv::BlockHash> dropped;
  auto on_drop = [&](BlockRecord&& r) { dropped.push_back(r.hash); };
  t.put(rec(1), 0, on_drop);
  t.put(rec(2), 0, on_drop);
  t.put(rec(3), 0, on_drop);
  EXPECT_EQ(t.num_blocks(), 3);
  EXPECT_EQ(t.num_bytes(), 300);
  EXPECT_TRUE(dropped.empty());
  t.put(rec(4), 0, on_drop);  // 1 is the least recently used
  EXPECT_EQ(dropped, (std::vector<kv::BlockHash>{1}));
  EXPECT_FALSE(t.contains(1, toks(1, 2)));
  EXPECT_TRUE(t.contains(2, toks(2, 2)));
  EXPECT_FALSE(t.contains(2, toks(9, 2)));  // same key, other tokens: not this block
  EXPECT_EQ(t.num_evictions(), 1);
}

TEST(HostTier, TakeIsExclusiveAndFreesItsBytes) {
  HostTier t(1000);
  t.put(rec(5), 0, nullptr);
  EXPECT_FALSE(t.take(5, toks(6, 2)).has_value());
  std::optional<BlockRecord> r = t.take(5, toks(5, 2));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->parent, 4u);
  EXPECT_EQ(r->payload[0], std::byte(5));
  EXPECT_EQ(t.num_blocks(), 0);
  EXPECT_EQ(t.num_bytes(), 0);
  EXPECT_FALSE(t.contains(5, toks(5, 2)));
}

TEST(HostTier, ARecordLargerThanTheBudgetGoesStraightOn) {
  HostTier t(50);
  int handed_on = 0;
  t.put(rec(1), 0, [&](BlockRecord&&) { ++handed_on; });
  EXPECT_EQ(handed_on, 1);
  EXPECT_EQ(t.num_blocks(), 0);
}

TEST(HostTier, PutOfAKeyAlreadyHeldReplacesIt) {
  HostTier t(1000);
  t.put(rec(1), 0, nullptr);
  t.put(rec(1), 0, nullptr);
  EXPECT_EQ(t.num_blocks(), 1);
  EXPECT_EQ(t.num_bytes(), 100);
  EXPECT_EQ(t.clear(), 1);
  EXPECT_EQ(t.num_bytes(), 0);
}

TEST(HostTier, PinnedBlocksGoLastAndLapsedPinsFirst) {
  HostTier t(300);
  std::vector<kv::BlockHash> dropped;
  auto on_drop = [&](BlockRecord&& r) { dropped.push_back(r.hash); };
  BlockRecord pinned = rec(1);
  pinned.pinned_until_ms = 1000;
  t.put(std::move(pinned), 0, on_drop);
  t.put(rec(2), 0, on_drop);
  t.put(rec(3), 0, on_drop);
  EXPECT_EQ(t.num_pinned(), 1);
  t.put(rec(4), 10, on_drop);  // 1 is the oldest, but pinned: 2 goes
  t.put(rec(5), 20, on_drop);
  EXPECT_EQ(dropped, (std::vector<kv::BlockHash>{2, 3}));
  EXPECT_TRUE(t.contains(1, toks(1, 2)));
  t.put(rec(6), 1000, on_drop);  // the pin lapsed: 1 is an ordinary block again, and the oldest
  EXPECT_EQ(dropped, (std::vector<kv::BlockHash>{2, 3, 1}));
  EXPECT_EQ(t.num_pinned(), 0);
  EXPECT_EQ(t.num_bytes(), 300);
}

TEST(HostTier, OnlyPinnedBlocksLeftAreStillEvicted) {
  HostTier t(200);
  std::vector<kv::BlockHash> dropped;
  for (kv::BlockHash h = 1; h <= 3; ++h) {
    BlockRecord r = rec(h);
    r.pinned_until_ms = 1000;
    t.put(std::move(r), 0, [&](BlockRecord&& d) { dropped.push_back(d.hash); });
  }
  EXPECT_EQ(dropped, (std::vector<kv::BlockHash>{1}));  // a pin is a preference, not a reservation
  EXPECT_EQ(t.num_bytes(), 200);
}

}  // namespace
}  // namespace llmesh
