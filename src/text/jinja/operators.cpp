// Python semantics for jinja2 operators, item/attribute access and iteration.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>

#include "text/jinja/builtins.h"
#include "text/jinja/unicode.h"

namespace llmesh::text::jinja {
namespace {

[[noreturn]] void fail_operands(const std::string& op, const Value& left, const Value& right) {
  throw RuntimeError("unsupported operand type(s) for " + op + ": '" + left.type_name() + "' and '" +
                     right.type_name() + "'");
}

Value repeat(const Value& sequence, int64_t count) {
  constexpr int64_t kMaxRepeatItems = int64_t{1} << 24;  // refuse runaway `'x' * 10**12`
  int64_t unit = sequence.is_string() ? static_cast<int64_t>(sequence.as_string().size())
                                      : static_cast<int64_t>(sequence.as_list().size());
  if (count > 0 && unit > 0 && count > kMaxRepeatItems / unit) throw RuntimeError("repetition result too large");
  if (sequence.is_string()) {
    std::string out;
    for (int64_t i = 0; i < count; ++i) out += sequence.as_string();
    return Value(out);
  }
  ValueList out;
  for (int64_t i = 0; i < count; ++i)
    for (const Value& item : sequence.as_list()) out.push_back(item);
  return Value(std::move(out));
}

// Python ints do not overflow; templates never need more than 64 bits, so a result that does not fit is an error.
[[noreturn]] void fail_overflow(const std::string& op) {
  throw RuntimeError("integer overflow in '" + op + "' (more than 64 bits)");
}

int64_t checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) fail_overflow("+");
  return r;
}

int64_t checked_sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) fail_overflow("-");
  return r;
}

int64_t checked_mul(int64_t a, int64_t b, const char* op = "*") {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) fail_overflow(op);
  return r;
}

// base ** exponent (exponent >= 0) by squaring: at most ~64 steps, whatever the exponent.
int64_t checked_pow(int64_t base, int64_t exponent) {
  int64_t result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = checked_mul(result, base, "**");
    exponent >>= 1;
    if (exponent > 0) base = checked_mul(base, base, "**");
  }
  return result;
}

int64_t floor_div(int64_t a, int64_t b) {
  if (b == -1) return checked_sub(0, a);  // INT64_MIN // -1 does not fit
  int64_t quotient = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --quotient;
  return quotient;
}

int compare_values(const std::string& op, const Value& left, const Value& right) {
  if (left.is_number() && right.is_number()) {
    if (left.is_float() || right.is_float()) {
      double a = left.as_double(), b = right.as_double();
      return a < b ? -1 : a > b ? 1 : 0;
    }
    int64_t a = left.as_int(), b = right.as_int();
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (left.is_string() && right.is_string()) {
    int order = left.as_string().compare(right.as_string());  // UTF-8 byte order == code point order
    return order < 0 ? -1 : order > 0 ? 1 : 0;
  }
  if (left.is_list() && right.is_list()) {
    const ValueList& a = left.as_list();
    const ValueList& b = right.as_list();
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
      if (values_equal(a[i], b[i])) continue;
      return compare_values(op, a[i], b[i]);
    }
    return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
  }
  throw RuntimeError("'" + op + "' not supported between instances of '" + left.type_name() + "' and '" +
                     right.type_name() + "'");
}

// Python's `"%s and %d" % (a, b)`: the conversions %s %r %d %i %f %x %% with
// optional width/precision; a non-tuple right side is the single argument.
std::string format_printf_style(const std::string& pattern, const Value& arguments) {
  ValueList values = arguments.is_tuple() ? arguments.as_list() : ValueList{arguments};
  size_t next_value = 0;
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out.push_back(pattern[i]);
      continue;
    }
    size_t spec_start = ++i;
    while (i < pattern.size() && std::strchr("-+ 0#.123456789", pattern[i])) ++i;
    if (i >= pattern.size()) throw RuntimeError("incomplete format");
    char conversion = pattern[i];
    if (conversion == '%') {
      out.push_back('%');
      continue;
    }
    if (next_value >= values.size()) throw RuntimeError("not enough arguments for format string");
    const Value& value = values[next_value++];
    std::string flags = pattern.substr(spec_start, i - spec_start);
    std::string spec = "%" + flags;
    char buffer[512];
    switch (conversion) {
      case 's':
      case 'r': {
        std::string text = conversion == 's' ? value.str() : value.repr();
        std::snprintf(buffer, sizeof(buffer), (spec + "s").c_str(), text.c_str());
        out += text.size() >= sizeof(buffer) - 1 ? text : std::string(buffer);
        break;
      }
      case 'd':
      case 'i':
      case 'x':
      case 'X':
        if (!value.is_number()) throw RuntimeError("%" + std::string(1, conversion) + " format: a number is required, not " + value.type_name());
        std::snprintf(buffer, sizeof(buffer), (spec + "ll" + (conversion == 'i' ? 'd' : conversion)).c_str(),
                      static_cast<long long>(value.is_float() ? static_cast<int64_t>(value.as_double()) : value.as_int()));
        out += buffer;
        break;
      case 'f':
      case 'F':
      case 'e':
      case 'g':
        if (!value.is_number()) throw RuntimeError("must be real number, not " + value.type_name());
        std::snprintf(buffer, sizeof(buffer), (spec + conversion).c_str(), value.as_double());
        out += buffer;
        break;
      default: throw RuntimeError(std::string("unsupported format character '") + conversion + "'");
    }
  }
  if (next_value < values.size()) throw RuntimeError("not all arguments converted during string formatting");
  return out;
}

int64_t normalize_index(int64_t index, int64_t length) { return index < 0 ? index + length : index; }

}  // namespace

std::string printf_format(const std::string& pattern, const Value& arguments) {
  return format_printf_style(pattern, arguments);
}

void fail_undefined(const Value& value) {
  const std::string& hint = value.undefined_name();
  throw RuntimeError(hint.empty() ? "undefined value" : hint);
}

Value binary_op(const std::string& op, const Value& left, const Value& right) {
  if (op == "~") return Value(left.str() + right.str());
  if (left.is_undefined()) fail_undefined(left);
  if (right.is_undefined()) fail_undefined(right);
  bool numbers = left.is_number() && right.is_number();
  bool use_float = numbers && (left.is_float() || right.is_float());
  if (op == "+") {
    if (numbers) return use_float ? Value(left.as_double() + right.as_double()) : Value(checked_add(left.as_int(), right.as_int()));
    if (left.is_string() && right.is_string()) return Value(left.as_string() + right.as_string());
    if (left.is_list() && right.is_list()) {
      ValueList out = left.as_list();
      for (const Value& item : right.as_list()) out.push_back(item);
      return Value(std::move(out));
    }
    if (left.is_string()) throw RuntimeError("can only concatenate str (not \"" + right.type_name() + "\") to str");
    fail_operands(op, left, right);
  }
  if (op == "-") {
    if (numbers) return use_float ? Value(left.as_double() - right.as_double()) : Value(checked_sub(left.as_int(), right.as_int()));
    fail_operands(op, left, right);
  }
  if (op == "*") {
    if (numbers) return use_float ? Value(left.as_double() * right.as_double()) : Value(checked_mul(left.as_int(), right.as_int()));
    if ((left.is_string() || left.is_list()) && right.is_number() && !right.is_float()) return repeat(left, right.as_int());
    if ((right.is_string() || right.is_list()) && left.is_number() && !left.is_float()) return repeat(right, left.as_int());
    fail_operands(op, left, right);
  }
  if (!numbers) {
    if (op == "%" && left.is_string()) return Value(format_printf_style(left.as_string(), right));
    fail_operands(op, left, right);
  }
  if (op == "/") {
    if (right.as_double() == 0.0) throw RuntimeError("division by zero");
    return Value(left.as_double() / right.as_double());
  }
  if (op == "//") {
    if (right.as_double() == 0.0) throw RuntimeError("integer division or modulo by zero");
    if (use_float) return Value(std::floor(left.as_double() / right.as_double()));
    return Value(floor_div(left.as_int(), right.as_int()));
  }
  if (op == "%") {
    if (right.as_double() == 0.0) throw RuntimeError("integer division or modulo by zero");
    if (use_float) {
      double a = left.as_double(), b = right.as_double();
      double remainder = std::fmod(a, b);
      if (remainder != 0.0 && ((remainder < 0) != (b < 0))) remainder += b;
      return Value(remainder);
    }
    int64_t a = left.as_int(), b = right.as_int();
    if (b == -1) return Value(int64_t{0});  // a - (a // -1) * -1 == 0, without INT64_MIN overflowing
    return Value(a - floor_div(a, b) * b);
  }
  if (op == "**") {
    if (!use_float && right.as_int() >= 0) {
      return Value(checked_pow(left.as_int(), right.as_int()));
    }
    return Value(std::pow(left.as_double(), right.as_double()));
  }
  throw RuntimeError("unknown operator " + op);
}

bool compare_op(const std::string& op, const Value& left, const Value& right) {
  if (op == "==") return values_equal(left, right);
  if (op == "!=") return !values_equal(left, right);
  if (op == "in" || op == "not in") {
    bool found = false;
    if (right.is_string()) {
      if (!left.is_string())
        throw RuntimeError("'in <string>' requires string as left operand, not " + left.type_name());
      found = right.as_string().find(left.as_string()) != std::string::npos;
    } else if (right.is_list()) {
      for (const Value& item : right.as_list())
        if (values_equal(item, left)) {
          found = true;
          break;
        }
    } else if (right.is_dict() || right.is_namespace()) {
      found = left.is_string() && right.as_dict().find(left.as_string()) != nullptr;
    } else if (right.is_undefined()) {
      found = false;  // iterates as empty
    } else {
      throw RuntimeError("argument of type '" + right.type_name() + "' is not iterable");
    }
    return op == "in" ? found : !found;
  }
  if (left.is_undefined()) fail_undefined(left);
  if (right.is_undefined()) fail_undefined(right);
  int order = compare_values(op, left, right);
  if (op == "<") return order < 0;
  if (op == "<=") return order <= 0;
  if (op == ">") return order > 0;
  if (op == ">=") return order >= 0;
  throw RuntimeError("unknown comparison " + op);
}

Value negate(const Value& value) {
  if (value.is_undefined()) fail_undefined(value);
  if (value.is_float()) return Value(-value.as_double());
  if (value.is_number()) return Value(checked_sub(0, value.as_int()));
  throw RuntimeError("bad operand type for unary -: '" + value.type_name() + "'");
}

Value slice(const Value& object, const Value& start_value, const Value& stop_value, const Value& step_value) {
  if (object.is_undefined()) fail_undefined(object);
  auto optional_int = [](const Value& value, const char* what) -> std::optional<int64_t> {
    if (value.is_undefined() || value.is_none()) return std::nullopt;
    if (!value.is_number() || value.is_float())
      throw RuntimeError(std::string("slice ") + what + " must be an integer or None");
    return value.as_int();
  };
  std::optional<int64_t> start = optional_int(start_value, "start");
  std::optional<int64_t> stop = optional_int(stop_value, "stop");
  int64_t step = optional_int(step_value, "step").value_or(1);
  if (step == 0) throw RuntimeError("slice step cannot be zero");

  std::u32string code_points;
  int64_t length;
  if (object.is_string()) {
    code_points = utf8_decode(object.as_string());
    length = static_cast<int64_t>(code_points.size());
  } else if (object.is_list()) {
    length = static_cast<int64_t>(object.as_list().size());
  } else {
    throw RuntimeError("'" + object.type_name() + "' object is not subscriptable");
  }
  // Python's slice.indices().
  auto clamp = [&](std::optional<int64_t> index, int64_t if_missing) {
    if (!index) return if_missing;
    int64_t i = *index < 0 ? *index + length : *index;
    if (step > 0) return std::clamp<int64_t>(i, 0, length);
    return std::clamp<int64_t>(i, -1, length - 1);
  };
  int64_t first = clamp(start, step > 0 ? 0 : length - 1);
  int64_t last = clamp(stop, step > 0 ? length : -1);
  std::vector<int64_t> indices;
  for (int64_t i = first; step > 0 ? i < last : i > last; i += step) indices.push_back(i);
  if (object.is_string()) {
    std::u32string out;
    for (int64_t i : indices) out.push_back(code_points[i]);
    return Value(utf8_encode(out));
  }
  ValueList out;
  for (int64_t i : indices) out.push_back(object.as_list()[i]);
  return Value(std::move(out));
}

Value get_item(const Value& object, const Value& key) {
  if (object.is_undefined()) fail_undefined(object);
  if (object.is_list() && key.is_number() && !key.is_float()) {
    const ValueList& list = object.as_list();
    int64_t index = normalize_index(key.as_int(), static_cast<int64_t>(list.size()));
    if (index < 0 || index >= static_cast<int64_t>(list.size())) return Value::undefined("list index out of range");
    return list[index];
  }
  if (object.is_string() && key.is_number() && !key.is_float()) {
    std::u32string code_points = utf8_decode(object.as_string());
    int64_t index = normalize_index(key.as_int(), static_cast<int64_t>(code_points.size()));
    if (index < 0 || index >= static_cast<int64_t>(code_points.size())) return Value::undefined("string index out of range");
    return Value(utf8_encode(std::u32string(1, code_points[index])));
  }
  if ((object.is_dict() || object.is_namespace()) && key.is_string()) {
    if (const Value* found = object.as_dict().find(key.as_string())) return *found;
  }
  if (key.is_string()) {  // jinja2 falls back to the attribute (a method)
    Value method = bound_method(object, key.as_string());
    if (!method.is_undefined()) return method;
  }
  return Value::undefined("'" + object.type_name() + " object' has no attribute " + key.repr());
}

Value get_attribute(const Value& object, const std::string& name) {
  if (object.is_undefined()) fail_undefined(object);
  Value method = bound_method(object, name);
  if (!method.is_undefined()) return method;
  if (object.is_dict() || object.is_namespace()) {
    if (const Value* found = object.as_dict().find(name)) return *found;
  }
  return Value::undefined("'" + object.type_name() + " object' has no attribute '" + name + "'");
}

ValueList iterate(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: return {};
    case Value::Kind::kList: return value.as_list();
    case Value::Kind::kDict: {
      ValueList keys;
      for (const auto& entry : value.as_dict().entries()) keys.emplace_back(entry.first);
      return keys;
    }
    case Value::Kind::kString: {
      ValueList characters;
      for (char32_t c : utf8_decode(value.as_string())) characters.emplace_back(utf8_encode(std::u32string(1, c)));
      return characters;
    }
    default: throw RuntimeError("'" + value.type_name() + "' object is not iterable");
  }
}

int64_t length_of(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: return 0;
    case Value::Kind::kString: return static_cast<int64_t>(utf8_length(value.as_string()));
    case Value::Kind::kList: return static_cast<int64_t>(value.as_list().size());
    case Value::Kind::kDict: return static_cast<int64_t>(value.as_dict().size());
    default: throw RuntimeError("object of type '" + value.type_name() + "' has no len()");
  }
}

}  // namespace llmesh::text::jinja
