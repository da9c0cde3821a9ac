// The real Qwen3 tokenizer (assets/npm/tokenizer-qwen3, made by
// scripts/fetch_assets.sh), loaded once; null when the assets are missing.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "text/tokenizer.h"
#include "text/tokenizer_json.h"

namespace llmesh::api {

inline const text::Tokenizer* qwen3_tokenizer() {
  static std::unique_ptr<text::Tokenizer> tokenizer = [] {
    const std::string path = std::string(LLMESH_SOURCE_DIR) + "/assets/npm/tokenizer-qwen3/models/tokenizer.json";
    if (!std::filesystem::exists(path)) return std::unique_ptr<text::Tokenizer>();
    return std::make_unique<text::Tokenizer>(text::read_hf_tokenizer_json(path));
  }();
  return tokenizer.get();
}

}  // namespace llmesh::api
