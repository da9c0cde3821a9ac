#include "text/jinja/value.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "text/jinja/unicode.h"

namespace llmesh::text::jinja {

const Value* ValueDict::find(const std::string& key) const {
  for (const auto& [entry_key, value] : entries_)
    if (entry_key == key) return &value;
  return nullptr;
}

Value* ValueDict::find(const std::string& key) {
  for (auto& [entry_key, value] : entries_)
    if (entry_key == key) return &value;
  return nullptr;
}

void ValueDict::set(const std::string& key, Value value) {
  if (Value* existing = find(key)) {
    *existing = std::move(value);
    return;
  }
  entries_.emplace_back(key, std::move(value));
}

const Value* CallArgs::get_keyword(const std::string& name) const {
  for (const auto& [key, value] : keyword)
    if (key == name) return &value;
  return nullptr;
}

const Value* CallArgs::get(size_t position, const std::string& name) const {
  if (position < positional.size()) return &positional[position];
  return get_keyword(name);
}

Value Value::make_namespace(ValueDict attributes) {
  Value value;
  value.data_ = DictBox{std::make_shared<ValueDict>(std::move(attributes)), true};
  return value;
}

Value Value::make_tuple(ValueList items) {
  Value value;
  value.data_ = ListBox{std::make_shared<ValueList>(std::move(items)), true};
  return value;
}

Value::Kind Value::kind() const {
  switch (data_.index()) {
    case 0: return Kind::kUndefined;
    case 1: return Kind::kNone;
    case 2: return Kind::kBool;
    case 3: return Kind::kInt;
    case 4: return Kind::kFloat;
    case 5: return Kind::kString;
    case 6: return Kind::kList;
    case 7: return std::get<DictBox>(data_).is_namespace ? Kind::kNamespace : Kind::kDict;
    default: return Kind::kFunction;
  }
}

int64_t Value::as_int() const {
  if (is_bool()) return as_bool() ? 1 : 0;
  return std::get<int64_t>(data_);
}

double Value::as_double() const {
  if (is_float()) return std::get<double>(data_);
  return static_cast<double>(as_int());
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool: return as_bool();
    case Kind::kInt: return as_int() != 0;
    case Kind::kFloat: return as_double() != 0.0;
    case Kind::kString: return !as_string().empty();
    case Kind::kList: return !as_list().empty();
    case Kind::kDict: return as_dict().size() != 0;
    case Kind::kNamespace:
    case Kind::kFunction: return true;
  }
  return false;
}

std::string format_python_float(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0.0) return std::signbit(value) ? "-0.0" : "0.0";
  // Python's repr: the shortest digits that round-trip, in fixed notation for
  // decimal exponents -4..15 and as d.ddde+XX otherwise.
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
  std::string scientific(buffer, end);  // "-1.2345e+02"
  size_t e_pos = scientific.find('e');
  int exponent = std::stoi(scientific.substr(e_pos + 1));
  std::string mantissa = scientific.substr(0, e_pos);
  std::string sign;
  if (mantissa[0] == '-') {
    sign = "-";
    mantissa.erase(0, 1);
  }
  std::string digits;
  for (char c : mantissa)
    if (c != '.') digits.push_back(c);
  if (exponent < -4 || exponent >= 16) {
    std::string out = sign + digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    return out + fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
  }
  std::string out = sign;
  if (exponent < 0) {
    out += "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  } else if (static_cast<size_t>(exponent) + 1 >= digits.size()) {
    out += digits + std::string(exponent + 1 - digits.size(), '0') + ".0";
  } else {
    out += digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
  }
  return out;
}

static std::string python_string_repr(const std::string& text) {
  bool has_single = text.find('\'') != std::string::npos;
  bool has_double = text.find('"') != std::string::npos;
  char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  for (char32_t c : utf8_decode(text)) {
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0)) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(c));
    } else {
      utf8_append(out, c);
    }
  }
  out.push_back(quote);
  return out;
}

std::string Value::str() const {
  switch (kind()) {
    case Kind::kUndefined: return "";
    case Kind::kNone: return "None";
    case Kind::kBool: return as_bool() ? "True" : "False";
    case Kind::kInt: return std::to_string(as_int());
    case Kind::kFloat: return format_python_float(as_double());
    case Kind::kString: return as_string();
    default: return repr();
  }
}

std::string Value::repr() const {
  switch (kind()) {
    case Kind::kUndefined: return "Undefined";
    case Kind::kString: return python_string_repr(as_string());
    case Kind::kList: {
      bool tuple = is_tuple();
      std::string out = tuple ? "(" : "[";
      bool first = true;
      for (const Value& item : as_list()) {
        if (!first) out += ", ";
        first = false;
        out += item.repr();
      }
      if (tuple && as_list().size() == 1) out += ",";
      return out + (tuple ? ")" : "]");
    }
    case Kind::kDict: {
      std::string out = "{";
      bool first = true;
      for (const auto& [key, item] : as_dict().entries()) {
        if (!first) out += ", ";
        first = false;
        out += python_string_repr(key) + ": " + item.repr();
      }
      return out + "}";
    }
    case Kind::kNamespace: {
      std::string out = "<Namespace {";
      bool first = true;
      for (const auto& [key, item] : as_dict().entries()) {
        if (!first) out += ", ";
        first = false;
        out += python_string_repr(key) + ": " + item.repr();
      }
      return out + "}>";
    }
    case Kind::kFunction: return "<function>";
    default: return str();
  }
}

std::string Value::type_name() const {
  switch (kind()) {
    case Kind::kUndefined: return "Undefined";
    case Kind::kNone: return "NoneType";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return "str";
    case Kind::kList: return is_tuple() ? "tuple" : "list";
    case Kind::kDict: return "dict";
    case Kind::kNamespace: return "Namespace";
    case Kind::kFunction: return "function";
  }
  return "object";
}

template <typename Json>
static Value value_from_json(const Json& json) {
  switch (json.type()) {
    case nlohmann::json::value_t::null: return Value::none();
    case nlohmann::json::value_t::boolean: return Value(json.template get<bool>());
    case nlohmann::json::value_t::number_integer: return Value(json.template get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: return Value(static_cast<int64_t>(json.template get<uint64_t>()));
    case nlohmann::json::value_t::number_float: return Value(json.template get<double>());
    case nlohmann::json::value_t::string: return Value(json.template get<std::string>());
    case nlohmann::json::value_t::array: {
      ValueList list;
      list.reserve(json.size());
      for (const auto& item : json) list.push_back(value_from_json(item));
      return Value(std::move(list));
    }
    case nlohmann::json::value_t::object: {
      ValueDict dict;
      for (auto it = json.begin(); it != json.end(); ++it) dict.set(it.key(), value_from_json(it.value()));
      return Value(std::move(dict));
    }
    default: return Value::none();
  }
}

Value Value::from_json(const nlohmann::json& json) { return value_from_json(json); }
Value Value::from_json(const nlohmann::ordered_json& json) { return value_from_json(json); }

bool values_equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return true;
    case Value::Kind::kString: return a.as_string() == b.as_string();
    case Value::Kind::kList: {
      const ValueList& left = a.as_list();
      const ValueList& right = b.as_list();
      if (left.size() != right.size()) return false;
      for (size_t i = 0; i < left.size(); ++i)
        if (!values_equal(left[i], right[i])) return false;
      return true;
    }
    case Value::Kind::kDict: {
      const ValueDict& left = a.as_dict();
      const ValueDict& right = b.as_dict();
      if (left.size() != right.size()) return false;
      for (const auto& [key, item] : left.entries()) {
        const Value* other = right.find(key);
        if (!other || !values_equal(item, *other)) return false;
      }
      return true;
    }
    case Value::Kind::kNamespace: return &a.as_dict() == &b.as_dict();
    case Value::Kind::kFunction: return &a.as_function() == &b.as_function();
    default: return false;
  }
}

namespace {

void check_storable_at(const void* container, const Value& value, int depth) {
  if (!value.is_list() && !value.is_dict() && !value.is_namespace()) return;
  const void* storage = value.is_list() ? static_cast<const void*>(&value.as_list()) : &value.as_dict();
  if (storage == container) throw RuntimeError("a list, dict or namespace cannot contain itself");
  if (depth >= kMaxValueDepth)
    throw RuntimeError("values nested more than " + std::to_string(kMaxValueDepth) + " levels deep");
  if (value.is_list()) {
    for (const Value& item : value.as_list()) check_storable_at(container, item, depth + 1);
  } else {
    for (const auto& [key, item] : value.as_dict().entries()) check_storable_at(container, item, depth + 1);
  }
}

}  // namespace

void check_storable(const void* container, const Value& value) { check_storable_at(container, value, 1); }

}  // namespace llmesh::text::jinja
