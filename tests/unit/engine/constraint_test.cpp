// The engine's side of constrained decoding, with a fake model whose logits
// always prefer the wrong token and a scripted constraint: masking, EOS only
// when complete, ending as soon as nothing can follow, min_tokens/ignore_eos.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/engine.h"

#include "fake_engine.h"

namespace llmesh {

using engine::FinishReason;
using engine::Request;
using engine::TokenConstraint;
using engine::TokenEvent;
using engine_test::Harness;
using engine_test::ids_of;
using engine_test::kEos;
using engine_test::kFavourite;

namespace {

// Allows exactly `script` in order; then, when `loop_token` >= 0, that token forever.
class ScriptedConstraint : public TokenConstraint {
 public:
  ScriptedConstraint(std::vector<int32_t> script, int32_t loop_token) : script_(std::move(script)), loop_(loop_token) {}
  void mask_logits(std::span<float> logits) override {
    for (size_t i = 0; i < logits.size(); ++i)
      if (int32_t(i) != next()) logits[i] = -INFINITY;
  }
  void accept_token(int32_t id) override {
    accepted.push_back(id);
    EXPECT_EQ(id, next());
    ++pos_;
  }
  bool is_complete() const override { return pos_ >= script_.size(); }
  bool can_continue() const override { return pos_ < script_.size() || loop_ >= 0; }
  void set_tokens_left(int64_t n) override { tokens_left.push_back(n); }

  std::vector<int32_t> accepted;
  std::vector<int64_t> tokens_left;

 private:
  int32_t next() const { return pos_ < script_.size() ? script_[pos_] : loop_; }
  std::vector<int32_t> script_;
  int32_t loop_;
  size_t pos_ = 0;
};

TEST(EngineConstraint, FollowsTheMaskAndEndsWithEosWithoutAnExtraStep) {
  Harness h;
  auto c = std::make_shared<ScriptedConstraint>(std::vector<int32_t>{7, 8, 9}, -1);
  Request r;
  r.max_tokens = 20;
  r.constraint = c;
  const auto events = h.run(r);
  EXPECT_EQ(ids_of(events), (std::vector<int32_t>{7, 8, 9, kEos}));
  EXPECT_EQ(events.back().finish_reason, FinishReason::Eos);
  for (size_t i = 0; i + 1 < events.size(); ++i) EXPECT_EQ(events[i].finish_reason, FinishReason::None);
  EXPECT_EQ(h.fake_model->num_forwards, 3);  // prompt, then 7, then 8; the EOS comes without running 9
  EXPECT_EQ(c->accepted, (std::vector<int32_t>{7, 8, 9}));
  EXPECT_EQ(c->tokens_left, (std::vector<int64_t>{20, 19, 18}));
}

TEST(EngineConstraint, CompleteGrammarEndsEvenWithIgnoreEos) {
  Harness h;
  Request r;
  r.max_tokens = 20;
  r.ignore_eos = true;
  r.constraint = std::make_shared<ScriptedConstraint>(std::vector<int32_t>{7}, -1);
  const auto events = h.run(r);
  EXPECT_EQ(ids_of(events), (std::vector<int32_t>{7, kEos}));
  EXPECT_EQ(events.back().finish_reason, FinishReason::Eos);
}

TEST(EngineConstraint, EosOnlyOnceComplete) {
  Harness h;
  h.fake_model->eos_logit = 20.0f;  // the model wants to stop at once
  Request r;
  r.max_tokens = 20;
  r.constraint = std::make_shared<ScriptedConstraint>(std::vector<int32_t>{7, 8}, 9);
  const auto events = h.run(r);
  EXPECT_EQ(ids_of(events), (std::vector<int32_t>{7, 8, kEos}));  // complete after 8, then EOS wins over 9
  EXPECT_EQ(events.back().finish_reason, FinishReason::Eos);
}

TEST(EngineConstraint, MinTokensKeepsAContinuableGrammarGoing) {
  Harness h;
  h.fake_model->eos_logit = 20.0f;
  Request r;
  r.max_tokens = 20;
  r.min_tokens = 4;
  r.constraint = std::make_shared<ScriptedConstraint>(std::vector<int32_t>{7}, 9);
  const auto events = h.run(r);
  EXPECT_EQ(ids_of(events), (std::vector<int32_t>{7, 9, 9, 9, kEos}));
}

TEST(EngineConstraint, LengthStillApplies) {
  Harness h;
  Request r;
  r.max_tokens = 2;
  r.constraint = std::make_shared<ScriptedConstraint>(std::vector<int32_t>{7, 8, 9}, -1);
  const auto events = h.run(r);
  EXPECT_EQ(ids_of(events), (std::vector<int32_t>{7, 8}));
  EXPECT_EQ(events.back().finish_reason, FinishReason::Length);
}

TEST(EngineConstraint, UnconstrainedRequestsAreUnchanged) {
  Harness h;
  Request r;
  r.max_tokens = 3;
  const auto events = h.run(r);
  EXPECT_EQ(ids_of(events), (std::vector<int32_t>{kFavourite, kFavourite, kFavourite}));
}

}  // namespace
}  // namespace llmesh
