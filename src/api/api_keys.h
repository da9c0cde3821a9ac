// The API keys a server accepts, each with an id that may be logged (the key
// itself never is). Keys come from `--api-key` (repeatable; id "key-N" by
// position) and `--api-key-file` (one per line: "KEY" or "NAME KEY"; blank
// lines and "#" comments skipped; id NAME, else "file-N" by line).
// A request presents a key as "Authorization: Bearer KEY" or "x-api-key: KEY".
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace llmesh::api {

class ApiKeys {
 public:
  ApiKeys() = default;
  // Throws Error naming the file (and line) when it cannot be read or is malformed.
  static ApiKeys load(const std::vector<std::string>& keys, const std::string& key_file);

  bool enabled() const { return !keys_.empty(); }
  size_t size() const { return keys_.size(); }
  // The id of the key `bearer` or `x_api_key` presents; none when neither
  // matches. Compares every key in full, so timing does not reveal a prefix.
  std::optional<std::string> match(const std::string& authorization, const std::string& x_api_key) const;

 private:
  struct Key {
    std::string id, secret;
  };
  std::vector<Key> keys_;
};

}  // namespace llmesh::api
