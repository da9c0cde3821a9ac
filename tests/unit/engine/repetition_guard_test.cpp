// The repetition-loop guard: exact triggering points for loops of each period,
// agreement with a brute-force check on random streams, output that does not
// repeat left alone, and the engine ending a looping generation with
// FinishReason::Repetition (and not a varied one).
#include <gtest/gtest.h>

#include <random>

#include "engine/repetition_guard.h"

#include "fake_engine.h"

namespace llmesh {

using engine::FinishReason;
using engine::RepetitionGuard;
using engine::RepetitionGuardOptions;
using engine::Request;
using engine_test::Harness;
using engine_test::kFavourite;

namespace {

// The first push (0-based) at which `tokens` trips the guard; -1 when none does.
int64_t first_trip(const RepetitionGuardOptions& options, const std::vector<int32_t>& tokens) {
  RepetitionGuard guard(options);
  for (size_t i = 0; i < tokens.size(); ++i)
    if (guard.push(tokens[i])) return int64_t(i);
  return -1;
}

// The definition, checked directly: some p <= max_period makes the last K tokens p-periodic with two copies.
bool loops_brute_force(const RepetitionGuardOptions& o, const std::vector<int32_t>& t) {
  const int64_t n = int64_t(t.size());
  for (int64_t p = 1; p <= o.max_period; ++p) {
    const int64_t window = std::max(o.window_tokens, 2 * p);
    if (window > n) continue;
    bool periodic = true;
    for (int64_t i = n - window + p; i < n && periodic; ++i) periodic = t[size_t(i)] == t[size_t(i - p)];
    if (periodic) return true;
  }
  return false;
}

TEST(RepetitionGuard, TripsExactlyWhenALoopCoversTheWindow) {
  const RepetitionGuardOptions options{.window_tokens = 12, .max_period = 4};
  std::vector<int32_t> tokens = {100, 101, 102};  // a varied preamble
  for (int i = 0; i < 10; ++i)
    for (int32_t id : {7, 8, 9}) tokens.push_back(id);  // period 3
  // The loop starts at index 3; its 12th token is index 14.
  EXPECT_EQ(first_trip(options, tokens), 14);

  RepetitionGuard guard(options);
  for (size_t i = 0; i <= 14; ++i) guard.push(tokens[i]);
  EXPECT_EQ(guard.loop_period(), 3);

  // One token repeated: period 1.
  EXPECT_EQ(first_trip(options, std::vector<int32_t>(20, 5)), 11);
  // A period longer than max_period is not looked for.
  std::vector<int32_t> long_period;
  for (int i = 0; i < 10; ++i)
    for (int32_t id : {1, 2, 3, 4, 5}) long_period.push_back(id);
  EXPECT_EQ(first_trip(options, long_period), -1);
  EXPECT_EQ(first_trip({.window_tokens = 12, .max_period = 5}, long_period), 11);
}

TEST(RepetitionGuard, NeedsTwoCopiesOfTheSpan) {
  // A window shorter than two periods: a span seen once is not a loop.
  const RepetitionGuardOptions options{.window_tokens = 4, .max_period = 8};
  const std::vector<int32_t> once = {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5};
  EXPECT_EQ(first_trip(options, once), -1);
  std::vector<int32_t> twice = once;
  twice.push_back(6);  // 1..6 twice: period 6, 12 tokens
  EXPECT_EQ(first_trip(options, twice), 11);
}

TEST(RepetitionGuard, LeavesOutputThatDoesNotRepeatAlone) {
  const RepetitionGuardOptions options{.window_tokens = 64, .max_period = 16};
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> vocab(0, 5000);
  std::vector<int32_t> text;
  for (int i = 0; i < 20000; ++i) text.push_back(vocab(rng));
  EXPECT_EQ(first_trip(options, text), -1);
  // Short repeats inside varied text (a repeated word, a repeated short phrase) are not loops.
  std::vector<int32_t> prose;
  for (int i = 0; i < 2000; ++i) {
    prose.push_back(vocab(rng));
    if (i % 50 == 0)
      for (int j = 0; j < 20; ++j) prose.push_back(42);  // 20 of one token: under the 64 window
  }
  EXPECT_EQ(first_trip(options, prose), -1);
}

TEST(RepetitionGuard, AgreesWithTheDefinitionOnRandomStreams) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const RepetitionGuardOptions options{.window_tokens = 2 + int64_t(rng() % 20), .max_period = 1 + int32_t(rng() % 6)};
    RepetitionGuard guard(options);
    std::vector<int32_t> tokens;
    const int32_t alphabet = 2 + int32_t(rng() % 3);  // small alphabets repeat often
    for (int i = 0; i < 200; ++i) {
      // Mostly copies of an earlier token so periodic runs form, sometimes a fresh one.
      const int32_t period = 1 + int32_t(rng() % 6);
      const bool copy = tokens.size() >= size_t(period) && rng() % 10 < 8;
      tokens.push_back(copy ? tokens[tokens.size() - size_t(period)] : int32_t(rng() % uint32_t(alphabet)));
      ASSERT_EQ(guard.push(tokens.back()), loops_brute_force(options, tokens))
          << "trial " << trial << " token " << i << " K=" << options.window_tokens << " P=" << options.max_period;
    }
  }
}

TEST(RepetitionGuard, DisabledNeverTrips) {
  EXPECT_EQ(first_trip({}, std::vector<int32_t>(1000, 3)), -1);
  EXPECT_EQ(first_trip({.window_tokens = 0, .max_period = 4}, std::vector<int32_t>(1000, 3)), -1);
  EXPECT_EQ(first_trip({.window_tokens = 8, .max_period = 0}, std::vector<int32_t>(1000, 3)), -1);
}

TEST(EngineLoopGuard, EndsALoopingGenerationWithRepetition) {
  Harness h;  // greedy on the fake model: kFavourite forever, a period-1 loop
  Request r;
  r.max_tokens = 100;
  r.loop_guard = {.window_tokens = 16, .max_period = 4};
  const auto events = h.run(r);
  ASSERT_EQ(events.size(), 16u);
  EXPECT_EQ(events.back().token_id, kFavourite);
  EXPECT_EQ(events.back().finish_reason, FinishReason::Repetition);
  EXPECT_EQ(engine::openai_finish_reason(FinishReason::Repetition), "stop");
}

TEST(EngineLoopGuard, OffByDefaultAndLengthStillWins) {
  Harness h;
  Request r;
  r.max_tokens = 40;
  const auto events = h.run(r);  // no guard: runs to max_tokens
  ASSERT_EQ(events.size(), 40u);
  EXPECT_EQ(events.back().finish_reason, FinishReason::Length);
  Request short_request;
  short_request.max_tokens = 10;
  short_request.loop_guard = {.window_tokens = 16, .max_period = 4};
  const auto short_events = h.run(short_request);  // ends on length before the loop covers the window
  ASSERT_EQ(short_events.size(), 10u);
  EXPECT_EQ(short_events.back().finish_reason, FinishReason::Length);
}

}  // namespace
}  // namespace llmesh
