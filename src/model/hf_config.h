// Hugging Face checkpoint conventions: config.json -> ModelConfig,
// generation_config.json -> sampling defaults, and HF tensor names -> llmesh's
// canonical (GGUF) names. tokenizer.json and tokenizer_config.json are the text
// layer's (text/tokenizer_files.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "format/json_util.h"
#include "model/model_files.h"

namespace llmesh::model {

// config.json. Error for unknown architectures, unknown rope scaling types,
// MoE configs with dense layers, and missing or mistyped required keys.
ModelConfig parse_hf_config(const format::json_util::Json& config, const std::string& source);

// eos_token_id from config.json or generation_config.json (an int or a list; absent -> empty).
std::vector<int32_t> parse_hf_eos_token_ids(const format::json_util::Json& config, const std::string& source);

// generation_config.json: eos ids and sampling defaults.
GenerationDefaults parse_hf_generation_config(const format::json_util::Json& config, const std::string& source);

// "model.layers.3.self_attn.q_proj.weight" -> "blk.3.attn_q.weight";
// nullopt for names llmesh does not use (e.g. rotary_emb.inv_freq).
std::optional<std::string> hf_tensor_to_canonical(const std::string& hf_name);

}  // namespace llmesh::model
