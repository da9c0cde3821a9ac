// Everything loaded for one model: its files (config, mapped weights and
// sampling defaults; tokenizer data and template: runtime/model_file_set.h),
// the tokenizer and chat template built from them,
// the forward pass and the weights' content identity; and the engine over it.
// Owned by the command or server that loaded it.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/mapped_file.h"
#include "core/thread_pool.h"
#include "dist/job.h"
#include "engine/engine.h"
#include "model/model.h"
#include "model/model_files.h"
#include "runtime/model_file_set.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace llmesh::runtime {

struct LoadedModel {
  model::ModelFiles files;
  text::TokenizerFiles tokenizer_files;
  std::unique_ptr<text::Tokenizer> tokenizer;
  std::unique_ptr<text::ChatTemplate> chat_template;  // null when the model has none
  std::unique_ptr<model::Model> model;
  std::vector<int32_t> eos_token_ids;            // generation stops at any of these
  std::string identity;                          // model_identity() of the weights
  dist::Job* job = nullptr;                      // the multi-rank job holding the other shards, if any
  model::ModelShard shard;                       // the part of the model `model` holds

  // Throws Error naming the path and the problem. With a job, loads this rank's
  // shard of the model (the layout is agreed with the other ranks, who call it too).
  static std::unique_ptr<LoadedModel> load(const std::string& path, ThreadPool& pool,
                                           WeightResidency residency = WeightResidency::Auto,
                                           dist::Job* job = nullptr, const model::ConfigOverrides& overrides = {});

  const model::ModelConfig& config() const { return files.config; }
  // The model's chat template applied to OpenAI-style messages; Error when there is none.
  std::string render_chat(const nlohmann::json& messages, const nlohmann::json& tools,
                          const text::ChatTemplateOptions& options) const;
  // Prompt text -> ids, adding BOS when the tokenizer asks for it and the text does not start with it.
  std::vector<int32_t> encode_prompt(const std::string& text) const;
};

// An engine running `model` in this process (or, with a job, on its ranks);
// fills options' EOS ids and model identity.
std::unique_ptr<engine::Engine> make_engine(LoadedModel& model, engine::EngineOptions options);

}  // namespace llmesh::runtime
