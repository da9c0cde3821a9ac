// Real chat templates from tests/golden/templates, parsed once per test binary.
#pragma once

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "text/chat_template.h"

namespace llmesh::api {

// tests/golden/templates/<family>.jinja with its BOS and EOS token texts.
inline const text::ChatTemplate& golden_template(const std::string& family, const std::string& bos,
                                                 const std::string& eos) {
  static std::map<std::string, text::ChatTemplate>* templates = new std::map<std::string, text::ChatTemplate>();
  auto it = templates->find(family);
  if (it == templates->end()) {
    std::ifstream in(std::string(LLMESH_SOURCE_DIR) + "/tests/golden/templates/" + family + ".jinja", std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    it = templates->try_emplace(family, buffer.str(), bos, eos).first;
  }
  return it->second;
}

inline const text::ChatTemplate& qwen3_template() { return golden_template("qwen3", "", "<|im_end|>"); }
inline const text::ChatTemplate& harmony_template() { return golden_template("gptoss", "<|startoftext|>", "<|return|>"); }

}  // namespace llmesh::api
