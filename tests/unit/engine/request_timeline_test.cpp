// The engine's per-request timeline (engine/request_timeline.h): one Queued
// phase, then one Prefill phase per chunk the step budget allows, with the
// prefix cache's hit on the first; preemptions marked; bounded.
#include "engine/request_timeline.h"

#include <gtest/gtest.h>

#include "fake_engine.h"

namespace llmesh::engine_test {
namespace {

using engine::RequestTimeline;
using engine::TimelinePhase;
using Kind = TimelinePhase::Kind;

std::vector<TimelinePhase> run_prompt(Engine& engine, int n) {
  Request r;
  for (int i = 0; i < n; ++i) r.prompt_ids.push_back(1 + i % 7);
  r.sampling.temperature = 0;
  r.max_tokens = 2;
  auto handle = engine.submit(std::move(r));
  TokenEvent ev;
  while (handle->next(&ev)) {
  }
  return handle->timeline().phases();
}

TEST(RequestTimeline, ChunksFollowTheStepBudgetAndTheSecondTurnHitsTheCache) {
  FakeModel model(fake_config());
  EngineOptions options;
  options.block_size = 4;
  options.max_batched_tokens = 8;
  options.eos_token_ids = {kEos};
  Engine engine(engine::make_local_executor(model), options);

  const auto cold = run_prompt(engine, 20);
  ASSERT_EQ(cold.size(), 4u);  // queued, then 8 + 8 + 4 prompt tokens
  EXPECT_EQ(cold[0].kind, Kind::Queued);
  EXPECT_LE(cold[0].start, cold[0].end);
  for (int i = 1; i <= 3; ++i) {
    EXPECT_EQ(cold[size_t(i)].kind, Kind::Prefill);
    EXPECT_LE(cold[size_t(i) - 1].end, cold[size_t(i)].start);
  }
  EXPECT_EQ(cold[1].num_tokens, 8);
  EXPECT_EQ(cold[2].num_tokens, 8);
  EXPECT_EQ(cold[3].num_tokens, 4);
  EXPECT_EQ(cold[1].num_cached_tokens, 0);

  // The same prompt again: 16 tokens (4 full blocks, the last token always computed) come from the cache.
  const auto warm = run_prompt(engine, 20);
  ASSERT_EQ(warm.size(), 2u);
  EXPECT_EQ(warm[1].kind, Kind::Prefill);
  EXPECT_EQ(warm[1].num_tokens, 4);
  EXPECT_EQ(warm[1].num_cached_tokens, 16);
}

TEST(RequestTimeline, APreemptionIsMarkedAndTheRequestQueuesAgain) {
  RequestTimeline t;
  const auto t0 = RequestTimeline::Clock::now();
  using std::chrono::milliseconds;
  t.on_prefill_step(t0, t0 + milliseconds(5), 8, 0, 0);
  t.on_prefill_step(t0 + milliseconds(5), t0 + milliseconds(9), 8, 8, 0);
  t.on_prefill_step(t0 + milliseconds(20), t0 + milliseconds(30), 16, 4, 1);  // readmitted: 4 cached
  const auto phases = t.phases();
  ASSERT_EQ(phases.size(), 6u);
  EXPECT_EQ(phases[0].kind, Kind::Queued);
  EXPECT_EQ(phases[1].kind, Kind::Prefill);
  EXPECT_EQ(phases[2].kind, Kind::Prefill);
  EXPECT_EQ(phases[2].num_cached_tokens, 0);  // only a chunk right after admission reports the hit
  EXPECT_EQ(phases[3].kind, Kind::Preempted);
  EXPECT_EQ(phases[3].start, t0 + milliseconds(9));
  EXPECT_EQ(phases[4].kind, Kind::Queued);
  EXPECT_EQ(phases[4].start, t0 + milliseconds(9));
  EXPECT_EQ(phases[4].end, t0 + milliseconds(20));
  EXPECT_EQ(phases[5].num_cached_tokens, 4);
}

TEST(RequestTimeline, AMillionChunksStayBounded) {
  RequestTimeline t;
  const auto t0 = RequestTimeline::Clock::now();
  for (int i = 0; i < 100000; ++i) t.on_prefill_step(t0, t0, 1, i, 0);
  const auto phases = t.phases();
  EXPECT_EQ(phases.size(), RequestTimeline::kMaxPhases);
  int64_t total = 0;
  for (const auto& p : phases) total += p.num_tokens;
  EXPECT_EQ(total, 100000);  // merged, not dropped
}

}  // namespace
}  // namespace llmesh::engine_test
