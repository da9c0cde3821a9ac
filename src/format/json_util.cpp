#include "format/json_util.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/error.h"

namespace llmesh::format::json_util {

Json parse_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  check(bool(in), "{}: cannot open", path);
  std::ostringstream text;
  text << in.rdbuf();
  check(!in.bad(), "{}: read error", path);
  return parse_text(text.str(), path);
}

Json parse_text(std::string_view text, const std::string& source) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    fail("{}: invalid JSON: {}", source, e.what());
  }
}

namespace {

const Json* member(const Json& object, const char* key, const std::string& source) {
  check(object.is_object(), "{}: expected a JSON object around '{}'", source, key);
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

}  // namespace

float checked_float(double value, const std::string& what, const std::string& source) {
  check(std::isfinite(value) && std::fabs(value) <= double(std::numeric_limits<float>::max()),
        "{}: {} = {} is not a finite float", source, what, value);
  return float(value);
}

int64_t as_int(const Json& value, const std::string& what, const std::string& source) {
  if (value.is_number_integer()) {
    if (value.is_number_unsigned()) {
      const uint64_t u = value.get<uint64_t>();
      check(u <= uint64_t(std::numeric_limits<int64_t>::max()), "{}: {} = {} is out of range", source, what, u);
      return int64_t(u);
    }
    return value.get<int64_t>();
  }
  // Some writers store integers as 4096.0; accept exact integral floats.
  if (value.is_number_float()) {
    const double d = value.get<double>();
    check(d > -9.2e18 && d < 9.2e18 && d == std::floor(d), "{}: {} must be an integer, got {}", source, what, d);
    return int64_t(d);
  }
  fail("{}: {} must be an integer, got {}", source, what, value.type_name());
}

std::optional<int64_t> find_int(const Json& object, const char* key, const std::string& source) {
  const Json* v = member(object, key, source);
  if (!v) return std::nullopt;
  return as_int(*v, fmt::format("'{}'", key), source);
}

std::optional<double> find_number(const Json& object, const char* key, const std::string& source) {
  const Json* v = member(object, key, source);
  if (!v) return std::nullopt;
  check(v->is_number(), "{}: '{}' must be a number, got {}", source, key, v->type_name());
  return v->get<double>();
}

std::optional<bool> find_bool(const Json& object, const char* key, const std::string& source) {
  const Json* v = member(object, key, source);
  if (!v) return std::nullopt;
  check(v->is_boolean(), "{}: '{}' must be true or false, got {}", source, key, v->type_name());
  return v->get<bool>();
}

std::optional<std::string> find_string(const Json& object, const char* key, const std::string& source) {
  const Json* v = member(object, key, source);
  if (!v) return std::nullopt;
  check(v->is_string(), "{}: '{}' must be a string, got {}", source, key, v->type_name());
  return v->get<std::string>();
}

int64_t get_int(const Json& object, const char* key, const std::string& source) {
  auto v = find_int(object, key, source);
  check(v.has_value(), "{}: missing required key '{}'", source, key);
  return *v;
}

double get_number(const Json& object, const char* key, const std::string& source) {
  auto v = find_number(object, key, source);
  check(v.has_value(), "{}: missing required key '{}'", source, key);
  return *v;
}

std::string get_string(const Json& object, const char* key, const std::string& source) {
  auto v = find_string(object, key, source);
  check(v.has_value(), "{}: missing required key '{}'", source, key);
  return *v;
}

std::vector<int32_t> find_ids(const Json& object, const char* key, const std::string& source) {
  std::vector<int32_t> ids;
  const Json* value = member(object, key, source);
  if (!value) return ids;
  auto add = [&](const Json& v) {
    const int64_t id = as_int(v, key, source);
    check(id >= 0 && id <= INT32_MAX, "{}: {} {} is out of range", source, key, id);
    if (std::find(ids.begin(), ids.end(), int32_t(id)) == ids.end()) ids.push_back(int32_t(id));
  };
  if (value->is_array()) {
    for (const Json& v : *value) add(v);
  } else {
    add(*value);
  }
  return ids;
}

}  // namespace llmesh::format::json_util
