// The engine's side of constrained decoding, with a fake model whose logits
// always prefer the wrong token and a scripted constraint: masking, EOS only
// when complete, ending as soon as nothing can follow, min_tokens/ignore_eos.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/engine.h"

namespace llmesh {

using engine::Engine;
using engine::EngineOptions;
using engine::FinishReason;
using engine::make_local_executor;
using engine::Request;
using engine::TokenConstraint;
using engine::TokenEvent;
using kv::KvPool;
using model::Model;
using model::ModelConfig;
using model::StepInput;
using model::StepShape;
using model::Workspace;

namespace {

constexpr int32_t kVocab = 16;
constexpr int32_t kEos = 0;
constexpr int32_t kFavourite = 5;  // what the model would pick unconstrained

class FakeModel : public Model {
 public:
  explicit FakeModel(ModelConfig config) : config_(std::move(config)) {}
  const ModelConfig& config() const override { return config_; }
  std::unique_ptr<Workspace> make_workspace(const StepShape&) const override { return std::make_unique<Workspace>(); }
  void forward(const StepInput& input, KvPool&, Workspace&, float* logits) const override {
    ++num_forwards;
    for (size_t row = 0; row < input.logits_indices.size(); ++row) {
      float* l = logits + row * size_t(kVocab);
      for (int32_t i = 0; i < kVocab; ++i) l[i] = float(i) * 0.01f;
      l[kFavourite] = 10.0f;
      l[kEos] = eos_logit;
    }
  }
  mutable int num_forwards = 0;
  float eos_logit = 5.0f;

 private:
  ModelConfig config_;
};

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

struct Harness {
  Harness() {
    ModelConfig config;
    config.vocab_size = kVocab;
    config.num_layers = 1;
    config.num_kv_heads = 1;
    config.head_dim = 4;
    config.max_position = 256;
    model = std::make_unique<FakeModel>(config);
    fake_model = model.get();
    EngineOptions options;
    options.block_size = 4;
    options.eos_token_ids = {kEos};
    engine = std::make_unique<Engine>(make_local_executor(*model), options);
  }

  std::vector<TokenEvent> run(Request r) {
    r.prompt_ids = {1, 2, 3};
    r.sampling.temperature = 0;
    auto handle = engine->submit(std::move(r));
    std::vector<TokenEvent> events;
    TokenEvent ev;
    while (handle->next(&ev)) events.push_back(ev);
    return events;
  }

  std::unique_ptr<FakeModel> model;
  FakeModel* fake_model = nullptr;
  std::unique_ptr<Engine> engine;
};

std::vector<int32_t> ids_of(const std::vector<TokenEvent>& events) {
  std::vector<int32_t> ids;
  for (const auto& e : events) ids.push_back(e.token_id);
  return ids;
}

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
