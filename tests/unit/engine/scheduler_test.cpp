// Scheduler behaviour with fake steps (no model): token budgets, chunked
// prefill, FIFO admission, prefix-cache hits, preemption.
#include "engine/scheduler.h"

#include <gtest/gtest.h>

#include <numeric>

namespace llmesh {

using engine::Request;
using engine::RequestHandle;
using engine::ScheduledSequence;
using engine::Scheduler;
using engine::SchedulerOptions;
using engine::Sequence;
using kv::KvCacheConfig;
using kv::KvCacheManager;

namespace {

std::unique_ptr<Sequence> make_seq(std::vector<int32_t> prompt, int64_t max_tokens, uint64_t arrival) {
  Request r;
  r.request_id = "r" + std::to_string(arrival);
  r.prompt_ids = std::move(prompt);
  r.max_tokens = max_tokens;
  r.sampling.temperature = 0;
  return std::make_unique<Sequence>(r, std::make_shared<RequestHandle>(r.request_id), 4, arrival);
}

std::vector<int32_t> range(int32_t start, int n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), start);
  return v;
}

// Runs the step: marks tokens computed and appends a sampled token to every sequence that caught up.
void fake_step(Scheduler& s, const std::vector<ScheduledSequence>& batch) {
  s.on_step_done(batch);
  for (const auto& b : batch)
    if (b.sequence->num_computed_tokens == b.sequence->num_tokens()) b.sequence->tokens.push_back(999);
}

// A scheduler over its own KV cache manager (blocks of 4 tokens).
struct TestScheduler : KvCacheManager, Scheduler {
  TestScheduler(int64_t blocks, int64_t budget, int64_t max_running = 8)
      : KvCacheManager(KvCacheConfig{blocks, 4, true, 0}),
        Scheduler(SchedulerOptions{max_running, budget}, *static_cast<KvCacheManager*>(this)) {}
  const KvCacheManager& block_pool() const { return *this; }
};

TEST(Scheduler, ChunkedPrefillThenDecode) {
  TestScheduler s(16, 8);
  s.add(make_seq(range(0, 10), 4, 0));
  auto b1 = s.schedule();
  ASSERT_EQ(b1.size(), 1u);
  EXPECT_EQ(b1[0].num_new_tokens, 8);  // budget-limited chunk
  fake_step(s, b1);
  auto b2 = s.schedule();
  EXPECT_EQ(b2[0].num_new_tokens, 2);  // rest of the prompt
  fake_step(s, b2);
  auto b3 = s.schedule();
  EXPECT_EQ(b3[0].num_new_tokens, 1);  // decode
  EXPECT_EQ(b3[0].sequence->block_table.num_blocks(), 3);  // 11 tokens -> 3 blocks of 4
}

TEST(Scheduler, DecodesGoFirstThenPrefillChunksFillTheBudget) {
  TestScheduler s(32, 6);
  s.add(make_seq(range(0, 3), 8, 0));
  fake_step(s, s.schedule());  // A prefilled, now decoding
  s.add(make_seq(range(100, 12), 8, 1));
  auto b = s.schedule();
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].sequence->request.request_id, "r0");
  EXPECT_EQ(b[0].num_new_tokens, 1);
  EXPECT_EQ(b[1].num_new_tokens, 5);  // 6 - 1
}

TEST(Scheduler, FifoHeadIsNeverSkipped) {
  TestScheduler s(4, 100);  // 16 tokens of KV
  s.add(make_seq(range(0, 12), 1, 0));   // 3 blocks
  s.add(make_seq(range(50, 8), 1, 1));   // 2 blocks: does not fit next to the first
  s.add(make_seq(range(90, 2), 1, 2));   // 1 block: would fit, but must not overtake
  auto b = s.schedule();
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(s.waiting().size(), 2u);
  EXPECT_EQ(s.waiting().front()->request.request_id, "r1");
}

TEST(Scheduler, RepeatedPrefixHitsTheCache) {
  TestScheduler s(16, 100);
  s.add(make_seq(range(0, 10), 1, 0));
  auto b = s.schedule();
  Sequence* a = b[0].sequence;
  fake_step(s, b);
  s.finish(a);
  EXPECT_EQ(s.block_pool().num_cached_blocks(), 2);  // two full blocks of the prompt
  s.add(make_seq(range(0, 10), 1, 1));
  auto b2 = s.schedule();
  EXPECT_EQ(b2[0].sequence->num_cached_tokens, 8);
  EXPECT_EQ(b2[0].num_new_tokens, 2);
  EXPECT_EQ(s.counters().prefix_hit_tokens, 8);
  EXPECT_EQ(s.counters().prefix_queried_tokens, 20);
}

TEST(Scheduler, FullyCachedPromptStillComputesItsLastToken) {
  TestScheduler s(16, 100);
  s.add(make_seq(range(0, 8), 1, 0));
  auto b = s.schedule();
  fake_step(s, b);
  s.finish(b[0].sequence);
  s.add(make_seq(range(0, 8), 1, 1));
  auto b2 = s.schedule();
  EXPECT_EQ(b2[0].sequence->num_cached_tokens, 4);  // the last block is recomputed for its logits
  EXPECT_EQ(b2[0].num_new_tokens, 4);
}

TEST(Scheduler, PreemptsTheNewestWhenBlocksRunOut) {
  TestScheduler s(4, 100);  // 16 tokens
  s.add(make_seq(range(0, 8), 20, 0));
  s.add(make_seq(range(50, 8), 20, 1));
  auto b = s.schedule();
  ASSERT_EQ(b.size(), 2u);  // 2 blocks each
  fake_step(s, b);          // both now have 9 tokens: position 8 needs a third block
  auto b2 = s.schedule();   // both need a third block: only 0 free -> preempt r1
  ASSERT_EQ(b2.size(), 1u);
  EXPECT_EQ(b2[0].sequence->request.request_id, "r0");
  EXPECT_EQ(s.counters().num_preemptions, 1);
  ASSERT_EQ(s.waiting().size(), 1u);
  EXPECT_EQ(s.waiting().front()->num_computed_tokens, 0);
  EXPECT_EQ(s.waiting().front()->block_table.num_blocks(), 0);
}

TEST(Scheduler, RunningLimit) {
  TestScheduler s(64, 100, 2);
  for (int i = 0; i < 3; ++i) s.add(make_seq(range(i * 10, 3), 4, uint64_t(i)));
  EXPECT_EQ(s.schedule().size(), 2u);
  EXPECT_EQ(s.waiting().size(), 1u);
}

}  // namespace
}  // namespace llmesh
