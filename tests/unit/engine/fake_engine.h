// A one-layer engine over a fake model whose logits always prefer one token
// (kFavourite, with EOS at a settable logit), for the selector's rules:
// constraints, the reasoning budget, the loop guard.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/engine.h"

namespace llmesh::engine_test {

using engine::Engine;
using engine::EngineOptions;
using engine::Request;
using engine::TokenEvent;

constexpr int32_t kVocab = 16;
constexpr int32_t kEos = 0;
constexpr int32_t kFavourite = 5;  // what the model would pick unconstrained

class FakeModel : public model::Model {
 public:
  explicit FakeModel(model::ModelConfig config) : config_(std::move(config)) {}
  const model::ModelConfig& config() const override { return config_; }
  std::unique_ptr<model::Workspace> make_workspace(const model::StepShape&) const override {
    return std::make_unique<model::Workspace>();
  }
  void forward(const model::StepInput& input, kv::KvPool&, model::Workspace&, float* logits) const override {
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
  model::ModelConfig config_;
};

// The fake model's shape: one layer, one 4-wide KV head, 256 positions.
inline model::ModelConfig fake_config() {
  model::ModelConfig config;
  config.vocab_size = kVocab;
  config.num_layers = 1;
  config.num_kv_heads = 1;
  config.head_dim = 4;
  config.max_position = 256;
  return config;
}

struct Harness {
  Harness() {
    model = std::make_unique<FakeModel>(fake_config());
    fake_model = model.get();
    EngineOptions options;
    options.block_size = 4;
    options.eos_token_ids = {kEos};
    engine = std::make_unique<Engine>(engine::make_local_executor(*model), options);
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

inline std::vector<int32_t> ids_of(const std::vector<TokenEvent>& events) {
  std::vector<int32_t> ids;
  for (const auto& e : events) ids.push_back(e.token_id);
  return ids;
}

}  // namespace llmesh::engine_test
