// Both halves of a model's files, each read by the layer that owns it: the
// model layer's config, weights (mapped, not yet read) and sampling defaults,
// and the text layer's vocabulary, chat template and end-of-turn tokens —
// checked against each other. `llmesh inspect` and `llmesh tokenize` stop
// here; LoadedModel goes on to build the tokenizer and the forward pass.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model_files.h"
#include "text/tokenizer_files.h"

namespace llmesh::runtime {

struct ModelFileSet {
  model::ModelFiles files;
  text::TokenizerFiles tokenizer;

  // A .gguf file (parsed once for both halves) or a Hugging Face directory; Error when the tokenizer
  // has more tokens than the model has embedding rows. Throws Error naming the path.
  // `overrides` change the config the files give (model::open_model).
  static ModelFileSet open(const std::string& path, const model::ConfigOverrides& overrides = {});

  // Generation stops at any of these: the ids the model's generation config lists, else the tokenizer's.
  std::vector<int32_t> eos_token_ids() const;
};

}  // namespace llmesh::runtime
