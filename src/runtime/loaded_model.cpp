#include "runtime/loaded_model.h"

#include <algorithm>

#include "core/error.h"
#include "core/log.h"
#include "model/model_identity.h"
#include "text/tool_call_format.h"

namespace llmesh::runtime {

std::unique_ptr<LoadedModel> LoadedModel::load(const std::string& path, ThreadPool& pool, WeightResidency residency,
                                               dist::Job* job, const model::ConfigOverrides& overrides) {
  auto loaded = std::make_unique<LoadedModel>();
  ModelFileSet opened = ModelFileSet::open(path, overrides);
  loaded->eos_token_ids = opened.eos_token_ids();
  loaded->files = std::move(opened.files);
  loaded->tokenizer_files = std::move(opened.tokenizer);
  loaded->job = job;
  if (job) loaded->shard = job->plan(loaded->files.config, loaded->files.weights);
  // Read every weight now (with a progress bar on a terminal) so the first
  // request does not pay for page faults and timings stay honest. A shard reads
  // only its own part, as its first steps touch it.
  const model::ModelConfig& config = loaded->files.config;
  if (loaded->shard.whole(config.num_layers, config.num_experts)) loaded->files.weights.load(residency);
  const text::TokenizerFiles& tokenizer_files = loaded->tokenizer_files;
  loaded->tokenizer = std::make_unique<text::Tokenizer>(tokenizer_files.vocab);
  if (!tokenizer_files.chat_template.empty()) {
    loaded->chat_template = std::make_unique<text::ChatTemplate>(tokenizer_files.chat_template,
                                                                 tokenizer_files.bos_token, tokenizer_files.eos_token);
  }
  loaded->model = model::create_model(loaded->files, pool, loaded->shard);
  loaded->identity = model::model_identity(loaded->files.weights, config);
  if (int32_t eos = loaded->tokenizer->eos_token_id(); eos >= 0 &&
      std::find(loaded->eos_token_ids.begin(), loaded->eos_token_ids.end(), eos) == loaded->eos_token_ids.end()) {
    loaded->eos_token_ids.push_back(eos);
  }
  // gpt-oss stops at <|return|> and <|call|>, not at the <|end|> of its analysis.
  text::use_harmony_stop_tokens(*loaded->tokenizer, loaded->eos_token_ids);
  return loaded;
}

std::unique_ptr<engine::Engine> make_engine(LoadedModel& model, engine::EngineOptions options) {
  options.eos_token_ids = model.eos_token_ids;
  options.model_identity = model.identity;
  if (model.job == nullptr) return std::make_unique<engine::Engine>(engine::make_local_executor(*model.model), options);
  // Each rank's blocks hold its layers and heads only: another layout's cached blocks do not fit.
  options.model_identity += "/" + model.job->layout().key();
  return std::make_unique<engine::Engine>(model.job->make_executor(*model.model), options);
}

std::string LoadedModel::render_chat(const nlohmann::json& messages, const nlohmann::json& tools,
                                     const text::ChatTemplateOptions& options) const {
  check(chat_template != nullptr, "{}: the model has no chat template", files.path);
  return chat_template->render(messages, tools, options);
}

std::vector<int32_t> LoadedModel::encode_prompt(const std::string& text) const {
  std::vector<int32_t> ids = tokenizer->encode(text, /*parse_special=*/true);
  const int32_t bos = tokenizer->bos_token_id();
  if (tokenizer->add_bos_token() && bos >= 0 && (ids.empty() || ids.front() != bos)) ids.insert(ids.begin(), bos);
  return ids;
}

}  // namespace llmesh::runtime
