// A Hugging Face tokenizer_config.json: the chat template and the BOS/EOS
// token strings chat templates use.
#pragma once

#include <optional>
#include <string>

#include "format/json_util.h"

namespace llmesh::text {

struct HfTokenizerConfig {
  std::string chat_template;  // "" when none
  std::string bos_token, eos_token;
  std::optional<bool> add_bos_token;
};
// tokenizer_config.json: chat_template (a string, or a list of {name, template}
// from which "default" is taken), bos_token / eos_token (a string or {content}).
HfTokenizerConfig parse_hf_tokenizer_config(const format::json_util::Json& config, const std::string& source);

}  // namespace llmesh::text
