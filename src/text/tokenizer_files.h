// The text layer's half of a model's files: what turns text into token ids and
// back — the byte-level BPE vocabulary, the chat template and the BOS/EOS
// strings it uses, and the tokens that end a turn — read from a .gguf file's
// tokenizer metadata (text/gguf_tokenizer.h) or a Hugging Face directory's
// tokenizer files, without the weights. The model layer reads the other half
// (model/model_files.h: config, weights, sampling defaults);
// runtime/model_file_set.h reads both and checks them against each other.
//
//   TokenizerFiles t = open_tokenizer_files("Qwen3-0.6B-Q8_0.gguf");
//   Tokenizer tokenizer(t.vocab);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "text/bpe_vocab.h"

namespace llmesh::text {

struct TokenizerFiles {
  BpeVocab vocab;                    // tokenizer data
  std::string chat_template;         // "" when the model has none
  std::string bos_token, eos_token;  // token strings for chat templates ("" when none)
  // The tokens that end generation by the tokenizer's account: GGUF's eos, eot and eom ids and the
  // well-known end-of-turn control tokens; a HF directory's eos. Ids the model's generation_config.json
  // or config.json lists take their place (model::GenerationDefaults::eos_token_ids).
  std::vector<int32_t> eos_token_ids;
};

// A Hugging Face model directory: tokenizer.json, tokenizer_config.json (template, BOS/EOS strings,
// add_bos_token), chat_template.jinja (the template, when tokenizer_config.json has none) and, for BOS/EOS ids that neither names, config.json's bos_token_id / eos_token_id.
// `dir` is what the user passed; errors name it.
TokenizerFiles open_hf_tokenizer(const std::string& dir);

// A .gguf file or a Hugging Face model directory. Throws Error naming the path.
TokenizerFiles open_tokenizer_files(const std::string& path);

}  // namespace llmesh::text
