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
  t.put(rec(1), on_drop);
  t.put(rec(2), on_drop);
  t.put(rec(3), on_drop);
  EXPECT_EQ(t.num_blocks(), 3);
  EXPECT_EQ(t.num_bytes(), 300);
  EXPECT_TRUE(dropped.empty());
  t.put(rec(4), on_drop);  // 1 is the least recently used
  EXPECT_EQ(dropped, (std::vector<kv::BlockHash>{1}));
  EXPECT_FALSE(t.contains(1, toks(1, 2)));
  EXPECT_TRUE(t.contains(2, toks(2, 2)));
  EXPECT_FALSE(t.contains(2, toks(9, 2)));  // same key, other tokens: not this block
  EXPECT_EQ(t.num_evictions(), 1);
}

TEST(HostTier, TakeIsExclusiveAndFreesItsBytes) {
  HostTier t(1000);
  t.put(rec(5), nullptr);
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
  t.put(rec(1), [&](BlockRecord&&) { ++handed_on; });
  EXPECT_EQ(handed_on, 1);
  EXPECT_EQ(t.num_blocks(), 0);
}

TEST(HostTier, PutOfAKeyAlreadyHeldReplacesIt) {
  HostTier t(1000);
  t.put(rec(1), nullptr);
  t.put(rec(1), nullptr);
  EXPECT_EQ(t.num_blocks(), 1);
  EXPECT_EQ(t.num_bytes(), 100);
  EXPECT_EQ(t.clear(), 1);
  EXPECT_EQ(t.num_bytes(), 0);
}

}  // namespace
}  // namespace llmesh
