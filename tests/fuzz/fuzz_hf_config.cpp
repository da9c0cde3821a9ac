// libFuzzer target: arbitrary text as config.json, tokenizer_config.json and
// generation_config.json, and as a HF tensor name.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"
#include "format/json_util.h"
#include "model/hf_config.h"
#include "text/hf_tokenizer_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)llmesh::model::hf_tensor_to_canonical(std::string(text));
  llmesh::format::json_util::Json json;
  try {
    json = llmesh::format::json_util::parse_text(text, "fuzz.json");
  } catch (const llmesh::Error&) {
    return 0;
  }
  try {
    (void)llmesh::model::parse_hf_config(json, "config.json");
  } catch (const llmesh::Error&) {
  }
  try {
    (void)llmesh::text::parse_hf_tokenizer_config(json, "tokenizer_config.json");
  } catch (const llmesh::Error&) {
  }
  try {
    (void)llmesh::model::parse_hf_generation_config(json, "generation_config.json");
  } catch (const llmesh::Error&) {
  }
  try {
    (void)llmesh::model::parse_hf_eos_token_ids(json, "config.json");
  } catch (const llmesh::Error&) {
  }
  return 0;
}
