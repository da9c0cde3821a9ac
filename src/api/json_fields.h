// Typed reads of optional request fields, shared by the protocol parsers
// (OpenAI chat/completions and Responses, Anthropic Messages). Absent and
// null both mean "not given"; a present value of the wrong type or out of
// range is an ApiError 400 naming the field. For nlohmann::json and
// nlohmann::ordered_json alike.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "api/api_error.h"

namespace llmesh::api {

// Request bodies may nest arrays and objects this deep at most. Copying,
// printing, comparing and rendering JSON recurse through it, so a body of
// 100,000 brackets would overflow the stack; real requests (tool schemas
// included) stay far below.
inline constexpr int kMaxJsonBodyDepth = 128;

// True when `text` nests arrays/objects deeper than `max_depth` (strings skipped; for any bytes).
inline bool json_nesting_exceeds(const std::string& text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

// A request body that must be one JSON object: ApiError 400 saying why it is not.
template <typename Json>
Json parse_json_object_body(const std::string& body) {
  if (json_nesting_exceeds(body, kMaxJsonBodyDepth)) {
    throw ApiError(400, "invalid_request_error",
                   fmt::format("The request body nests arrays and objects more than {} levels deep", kMaxJsonBodyDepth));
  }
  Json parsed;
  try {
    parsed = Json::parse(body);
  } catch (const typename Json::exception& e) {  // parse_error, and out_of_range for a number like 1e99999
    throw ApiError(400, "invalid_request_error", std::string("The request body is not valid JSON: ") + e.what());
  }
  if (!parsed.is_object()) {
    throw ApiError(400, "invalid_request_error",
                   fmt::format("The request body must be a JSON object, got {}", parsed.type_name()));
  }
  return parsed;
}

// The member's value, or nullptr when it is absent or null.
template <typename Json>
const Json* field(const Json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

template <typename Json>
std::optional<double> number_field(const Json& object, const char* key, double min, double max) {
  const Json* v = field(object, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) fail_param(key, "'{}' must be a number, got {}", key, v->type_name());
  const double x = v->template get<double>();
  if (!std::isfinite(x) || x < min || x > max)
    fail_param(key, "'{}' must be between {} and {}, got {}", key, min, max, x);
  return x;
}

// Integral floats (2.0) count as integers, as JavaScript clients send them.
template <typename Json>
std::optional<int64_t> integer_field(const Json& object, const char* key, int64_t min, int64_t max) {
  const Json* v = field(object, key);
  if (!v) return std::nullopt;
  bool integral = v->is_number_integer();
  if (v->is_number_float()) {
    const double x = v->template get<double>();
    integral = std::isfinite(x) && std::floor(x) == x && std::fabs(x) < 9e15;
  }
  if (!integral) fail_param(key, "'{}' must be an integer, got {}", key, v->dump());
  const int64_t x = v->is_number_float() ? int64_t(v->template get<double>()) : v->template get<int64_t>();
  if (x < min || x > max) fail_param(key, "'{}' must be between {} and {}, got {}", key, min, max, x);
  return x;
}

// `param` names the field in the error (default: `key`), e.g. "reasoning.summary".
template <typename Json>
std::optional<bool> bool_field(const Json& object, const char* key, const std::string& param = "") {
  const Json* v = field(object, key);
  if (!v) return std::nullopt;
  const std::string name = param.empty() ? std::string(key) : param;
  if (!v->is_boolean()) fail_param(name, "'{}' must be a boolean, got {}", name, v->type_name());
  return v->template get<bool>();
}

}  // namespace llmesh::api
