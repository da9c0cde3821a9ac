// Typed reads from JSON documents (config.json, tokenizer_config.json,
// safetensors headers) that fail with llmesh::Error naming the file and key,
// never with nlohmann's own exceptions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmesh::format::json_util {

using Json = nlohmann::json;

// Parses a whole file; Error when it is missing or not valid JSON.
Json parse_file(const std::string& path);
// Parses text read from somewhere else; `source` names it in errors.
Json parse_text(std::string_view text, const std::string& source);

// Optional members: absent or null -> nullopt; present with the wrong type -> Error.
std::optional<int64_t> find_int(const Json& object, const char* key, const std::string& source);
std::optional<double> find_number(const Json& object, const char* key, const std::string& source);
std::optional<bool> find_bool(const Json& object, const char* key, const std::string& source);
std::optional<std::string> find_string(const Json& object, const char* key, const std::string& source);

// Required members: absent, null or the wrong type -> Error.
int64_t get_int(const Json& object, const char* key, const std::string& source);
double get_number(const Json& object, const char* key, const std::string& source);
std::string get_string(const Json& object, const char* key, const std::string& source);

// A double narrowed to float; Error naming `what` when it is not finite or out of float range.
float checked_float(double value, const std::string& what, const std::string& source);

// An integer value (not a member); Error naming `what` otherwise.
int64_t as_int(const Json& value, const std::string& what, const std::string& source);

// A member holding one token id or a list of them (HF's eos_token_id): each in [0, INT32_MAX],
// in order, duplicates dropped; absent or null -> empty.
std::vector<int32_t> find_ids(const Json& object, const char* key, const std::string& source);

}  // namespace llmesh::format::json_util
