// The entry point of the model layer: open a model (a .gguf file or a Hugging
// Face directory) and get its config, weights and generation defaults,
// whatever the format. The tokenizer data and chat template in the same files
// are the text layer's (text/tokenizer_files.h: the model layer sees token ids
// only); runtime/model_file_set.h reads both halves.
//
//   ModelFiles files = open_model("Qwen3-0.6B-Q8_0.gguf");
//   files.weights.get("blk.0.attn_q.weight")  // a Tensor view {q_dim, hidden}
//
// Every problem with the files (missing, truncated, unknown architecture or
// dtype, shapes that contradict the config) throws llmesh::Error naming the file.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/model_config.h"
#include "model/weight_store.h"

namespace llmesh::format {
class GgufFile;
}  // namespace llmesh::format

namespace llmesh::model {

// Sampling defaults the model ships with (generation_config.json or GGUF
// general.sampling.*); unset fields mean "use the server's default".
struct GenerationDefaults {
  // Any of these ends generation, as generation_config.json (else config.json) lists them; empty for
  // GGUF, whose tokenizer metadata lists them (text::TokenizerFiles::eos_token_ids takes over).
  std::vector<int32_t> eos_token_ids;
  std::optional<float> temperature, top_p, min_p;
  std::optional<int> top_k;
  std::optional<float> repetition_penalty;
};

struct ModelFiles {
  std::string path;    // what the user passed
  std::string format;  // "gguf" or "safetensors"
  std::string name;    // general.name or the directory / file name
  ModelConfig config;
  WeightStore weights;  // canonical names -> Tensor views (owns the mappings)
  GenerationDefaults generation;
  // The parsed container of a .gguf file, whose metadata holds the tokenizer
  // (text::tokenizer_from_gguf reads it without parsing the file again); null for
  // a HF directory (`path` holds the tokenizer files). Set by open_model;
  // runtime::ModelFileSet::open drops it once the tokenizer is read.
  std::shared_ptr<const format::GgufFile> gguf;
};

// A .gguf file or a Hugging Face directory (config.json + *.safetensors), with `overrides`
// applied over its config. Throws llmesh::Error.
ModelFiles open_model(const std::string& path, const ConfigOverrides& overrides = {});

}  // namespace llmesh::model
