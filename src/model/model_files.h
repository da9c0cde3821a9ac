// The entry point of the model layer: open a model (a .gguf file or a Hugging
// Face directory) and get its config, weights, tokenizer data, chat template
// and generation defaults, whatever the format.
//
//   ModelFiles files = open_model("Qwen3-0.6B-Q8_0.gguf");
//   files.weights.get("blk.0.attn_q.weight")  // a Tensor view {q_dim, hidden}
//
// Every problem with the files (missing, truncated, unknown architecture or
// dtype, shapes that contradict the config) throws llmesh::Error naming the file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/model_config.h"
#include "model/weight_store.h"
#include "text/bpe_vocab.h"

namespace llmesh {

// Sampling defaults the model ships with (generation_config.json or GGUF
// general.sampling.*); unset fields mean "use the server's default".
struct GenerationDefaults {
  std::vector<int32_t> eos_token_ids;  // any of these ends generation
  std::optional<float> temperature, top_p, min_p;
  std::optional<int> top_k;
  std::optional<float> repetition_penalty;
};

struct ModelFiles {
  std::string path;    // what the user passed
  std::string format;  // "gguf" or "safetensors"
  std::string name;    // general.name or the directory / file name
  ModelConfig config;
  WeightStore weights;               // canonical names -> Tensor views (owns the mappings)
  BpeVocab vocab;                    // tokenizer data
  std::string chat_template;         // "" when the model has none
  std::string bos_token, eos_token;  // token strings for chat templates ("" when none)
  GenerationDefaults generation;
};

// A .gguf file or a Hugging Face directory (config.json + *.safetensors +
// tokenizer.json). Throws llmesh::Error.
ModelFiles open_model(const std::string& path);

}  // namespace llmesh
