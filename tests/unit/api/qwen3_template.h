// The real Qwen3 chat template (tests/golden/templates/qwen3.jinja), loaded once, for prompt tests.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "text/chat_template.h"

namespace llmesh::api {

inline const text::ChatTemplate& qwen3_template() {
  static const text::ChatTemplate* chat_template = [] {
    std::ifstream in(std::string(LLMESH_SOURCE_DIR) + "/tests/golden/templates/qwen3.jinja", std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return new text::ChatTemplate(buffer.str(), "", "<|im_end|>");
  }();
  return *chat_template;
}

}  // namespace llmesh::api
