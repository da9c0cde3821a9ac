#include "api/api_keys.h"

#include <fstream>
#include <sstream>

#include "core/error.h"

namespace llmesh::api {

namespace {

// Constant time in the length of `secret`: no early exit on the first differing byte.
bool same_secret(const std::string& given, const std::string& secret) {
  unsigned char diff = given.size() == secret.size() ? 0 : 1;
  for (size_t i = 0; i < secret.size(); ++i) diff |= (unsigned char)(secret[i] ^ (i < given.size() ? given[i] : 0));
  return diff == 0;
}

}  // namespace

ApiKeys ApiKeys::load(const std::vector<std::string>& keys, const std::string& key_file) {
  ApiKeys result;
  for (size_t i = 0; i < keys.size(); ++i) {
    check(!keys[i].empty(), "--api-key: a key may not be empty");
    result.keys_.push_back({"key-" + std::to_string(i + 1), keys[i]});
  }
  if (key_file.empty()) return result;
  std::ifstream in(key_file);
  check(in.good(), "--api-key-file {}: cannot be read", key_file);
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    std::istringstream fields(line);
    std::string first, second, extra;
    fields >> first >> second >> extra;
    if (first.empty() || first[0] == '#') continue;
    check(extra.empty(), "--api-key-file {} line {}: expected 'KEY' or 'NAME KEY'", key_file, line_no);
    if (second.empty()) {
      result.keys_.push_back({"file-" + std::to_string(line_no), first});
    } else {
      result.keys_.push_back({first, second});
    }
  }
  check(result.keys_.size() > keys.size(), "--api-key-file {}: no keys in it", key_file);
  return result;
}

std::optional<std::string> ApiKeys::match(const std::string& authorization, const std::string& x_api_key) const {
  constexpr std::string_view kBearer = "Bearer ";
  const std::string bearer =
      authorization.compare(0, kBearer.size(), kBearer) == 0 ? authorization.substr(kBearer.size()) : "";
  std::optional<std::string> id;
  for (const Key& key : keys_) {
    const bool hit = (!bearer.empty() && same_secret(bearer, key.secret)) |
                     (!x_api_key.empty() && same_secret(x_api_key, key.secret));
    if (hit && !id) id = key.id;
  }
  return id;
}

}  // namespace llmesh::api
