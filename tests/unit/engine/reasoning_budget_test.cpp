// The reasoning budget: counting inside the block, the close marker forced
// (one id per step) when the budget is spent, blocks the model closes or
// opens itself (markers spelled in any tokens), and the engine forcing the
// marker against the model's logits (also under an output constraint, which
// then sees the marker).
#include <gtest/gtest.h>

#include <cmath>

#include "engine/reasoning_budget.h"

#include "fake_engine.h"

namespace llmesh {

using engine::FinishReason;
using engine::ReasoningBudget;
using engine::ReasoningBudgetOptions;
using engine::Request;
using engine::TokenConstraint;
using engine_test::Harness;
using engine_test::ids_of;
using engine_test::kFavourite;

namespace {

// A toy vocabulary: 1..9 are letters, the markers have a token each and can also be spelled in pieces.
constexpr int32_t kOpen = 10, kClose = 11;        // "<think>", "</think>"
constexpr int32_t kOpenA = 12, kOpenB = 13;       // "<th", "ink>"
constexpr int32_t kCloseA = 14, kCloseB = 15;     // "</thi", "nk>"

std::string toy_bytes(int32_t id) {
  switch (id) {
    case kOpen: return "<think>";
    case kClose: return "</think>";
    case kOpenA: return "<th";
    case kOpenB: return "ink>";
    case kCloseA: return "</thi";
    case kCloseB: return "nk>";
    default: return std::string(1, char('a' + id - 1));
  }
}

ReasoningBudgetOptions budget_of(int64_t max_tokens, bool starts_in_reasoning,
                                 std::vector<int32_t> close_ids = {kClose}) {
  return {.max_tokens = max_tokens,
          .open_marker = "<think>",
          .close_marker = "</think>",
          .close_ids = std::move(close_ids),
          .token_bytes = toy_bytes,
          .starts_in_reasoning = starts_in_reasoning};
}

// Feeds `generated` ids, taking the forced one whenever there is one; returns what was emitted.
std::vector<int32_t> drive(ReasoningBudget& budget, const std::vector<int32_t>& generated) {
  std::vector<int32_t> out;
  size_t next = 0;
  while (next < generated.size()) {
    const std::optional<int32_t> forced = budget.forced_token();
    const int32_t id = forced ? *forced : generated[next++];
    budget.accept_token(id);
    out.push_back(id);
  }
  return out;
}

TEST(ReasoningBudget, ForcesTheCloseMarkerWhenTheBudgetIsSpent) {
  ReasoningBudget budget(budget_of(3, /*starts_in_reasoning=*/true));
  EXPECT_TRUE(budget.in_reasoning());
  EXPECT_EQ(drive(budget, {1, 2, 3, 4, 5}), (std::vector<int32_t>{1, 2, 3, kClose, 4, 5}));
  EXPECT_EQ(budget.num_reasoning_tokens(), 3);
  EXPECT_FALSE(budget.in_reasoning());
  EXPECT_FALSE(budget.forced_token().has_value());
}

TEST(ReasoningBudget, CountsFromTheModelsOpenMarkerAndStopsAtItsClose) {
  ReasoningBudget budget(budget_of(2, false));
  EXPECT_FALSE(budget.in_reasoning());
  EXPECT_EQ(drive(budget, {1, kOpen, 2, 3, 4}), (std::vector<int32_t>{1, kOpen, 2, 3, kClose, 4}));
  // A block closed within the budget is left alone.
  ReasoningBudget roomy(budget_of(5, false));
  EXPECT_EQ(drive(roomy, {kOpen, 2, kClose, 3, 4, 5, 6, 7}), (std::vector<int32_t>{kOpen, 2, kClose, 3, 4, 5, 6, 7}));
  EXPECT_EQ(roomy.num_reasoning_tokens(), 1);
  // A later block spends what is left of the same budget.
  ReasoningBudget shared(budget_of(2, false));
  EXPECT_EQ(drive(shared, {kOpen, 2, kClose, kOpen, 3, 4}), (std::vector<int32_t>{kOpen, 2, kClose, kOpen, 3, kClose, 4}));
}

TEST(ReasoningBudget, MarkersSpelledInPiecesAreFound) {
  // "<th" "ink>" opens the block, "</thi" "nk>" closes it: the text decides, not the ids.
  ReasoningBudget budget(budget_of(4, false));
  EXPECT_EQ(drive(budget, {1, kOpenA, kOpenB, 2, kCloseA, kCloseB, 3, 4, 5, 6, 7}),
            (std::vector<int32_t>{1, kOpenA, kOpenB, 2, kCloseA, kCloseB, 3, 4, 5, 6, 7}));
  EXPECT_EQ(budget.num_reasoning_tokens(), 2);  // 2 and "</thi": the token that completes the marker ends the count
  EXPECT_FALSE(budget.in_reasoning());
  ReasoningBudget spent(budget_of(2, false));
  EXPECT_EQ(drive(spent, {kOpenA, kOpenB, 1, 2, 3}), (std::vector<int32_t>{kOpenA, kOpenB, 1, 2, kClose, 3}));
}

TEST(ReasoningBudget, MultiTokenCloseAndAZeroBudget) {
  ReasoningBudget budget(budget_of(1, true, {kCloseA, kCloseB}));
  EXPECT_EQ(drive(budget, {1, 2, 3}), (std::vector<int32_t>{1, kCloseA, kCloseB, 2, 3}));
  EXPECT_FALSE(budget.in_reasoning());
  ReasoningBudget none(budget_of(0, true));
  EXPECT_EQ(drive(none, {1, 2}), (std::vector<int32_t>{kClose, 1, 2}));
}

TEST(ReasoningBudget, DisabledForcesNothing) {
  ReasoningBudget budget(budget_of(-1, true));
  EXPECT_EQ(drive(budget, {1, 2, 3, 4}), (std::vector<int32_t>{1, 2, 3, 4}));
  ReasoningBudgetOptions no_vocabulary = budget_of(1, true);
  no_vocabulary.token_bytes = nullptr;
  ReasoningBudget blind(no_vocabulary);
  EXPECT_EQ(drive(blind, {1, 2, 3}), (std::vector<int32_t>{1, 2, 3}));
}

TEST(EngineReasoningBudget, TheEngineForcesTheMarkerAgainstTheModel) {
  Harness h;  // the model always prefers kFavourite
  Request r;
  r.max_tokens = 8;
  r.reasoning_budget = budget_of(3, true);
  const auto events = h.run(r);
  EXPECT_EQ(ids_of(events), (std::vector<int32_t>{kFavourite, kFavourite, kFavourite, kClose, kFavourite, kFavourite,
                                                  kFavourite, kFavourite}));
  EXPECT_EQ(events.back().finish_reason, FinishReason::Length);
}

// Accepts anything, and records what it was given (a grammar's free reasoning text).
class RecordingConstraint : public TokenConstraint {
 public:
  void mask_logits(std::span<float> logits) override { logits[size_t(kClose)] = -INFINITY; }  // would refuse it
  void accept_token(int32_t id) override { accepted.push_back(id); }
  bool is_complete() const override { return false; }
  bool can_continue() const override { return true; }
  std::vector<int32_t> accepted;
};

TEST(EngineReasoningBudget, AForcedMarkerReachesTheConstraint) {
  Harness h;
  auto constraint = std::make_shared<RecordingConstraint>();
  Request r;
  r.max_tokens = 4;
  r.constraint = constraint;
  r.reasoning_budget = budget_of(2, true);
  const auto events = h.run(r);
  EXPECT_EQ(ids_of(events), (std::vector<int32_t>{kFavourite, kFavourite, kClose, kFavourite}));
  EXPECT_EQ(constraint->accepted, ids_of(events));
}

}  // namespace
}  // namespace llmesh
