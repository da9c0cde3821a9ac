// Reading the golden files made by tools/gen_template_goldens.py (Python jinja2, the reference).
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace llmesh::jinja_test {

inline std::string golden_path(const std::string& file) {
  return std::string(LLMESH_SOURCE_DIR) + "/tests/golden/templates/" + file;
}

inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// One JSON object per line, key order kept.
inline std::vector<nlohmann::ordered_json> read_jsonl(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<nlohmann::ordered_json> cases;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) cases.push_back(nlohmann::ordered_json::parse(line));
  return cases;
}

// Where two renderings first differ, for a readable failure message.
inline std::string first_difference(const std::string& expected, const std::string& actual) {
  size_t at = 0;
  while (at < expected.size() && at < actual.size() && expected[at] == actual[at]) ++at;
  size_t from = at > 40 ? at - 40 : 0;
  nlohmann::json excerpt = {{"byte", at},
                            {"expected", expected.substr(from, 100)},
                            {"actual", actual.substr(from, 100)}};
  return excerpt.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace llmesh::jinja_test
