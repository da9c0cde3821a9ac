// jinja2's built-in tests (`x is defined`, `x is divisibleby 3`, ...), with
// Python's notion of types: bool counts as a number, Undefined is iterable.
#include <map>

#include "text/jinja/builtins.h"

namespace llmesh::text::jinja {
namespace {

using Test = bool (*)(const Value& value, const CallArgs& args);

const Value& argument(const CallArgs& args, const char* test) {
  if (args.positional.empty()) throw RuntimeError(std::string("test '") + test + "' needs an argument");
  return args.positional[0];
}

bool test_defined(const Value& value, const CallArgs&) { return !value.is_undefined(); }
bool test_undefined(const Value& value, const CallArgs&) { return value.is_undefined(); }
bool test_none(const Value& value, const CallArgs&) { return value.is_none(); }
bool test_boolean(const Value& value, const CallArgs&) { return value.is_bool(); }
bool test_true(const Value& value, const CallArgs&) { return value.is_bool() && value.as_bool(); }
bool test_false(const Value& value, const CallArgs&) { return value.is_bool() && !value.as_bool(); }
bool test_integer(const Value& value, const CallArgs&) { return value.is_int(); }
bool test_float(const Value& value, const CallArgs&) { return value.is_float(); }
bool test_number(const Value& value, const CallArgs&) { return value.is_number(); }
bool test_string(const Value& value, const CallArgs&) { return value.is_string(); }
bool test_mapping(const Value& value, const CallArgs&) { return value.is_dict(); }
bool test_callable(const Value& value, const CallArgs&) { return value.is_function() || value.is_undefined(); }  // Undefined has __call__
bool test_iterable(const Value& value, const CallArgs&) {
  return value.is_string() || value.is_list() || value.is_dict() || value.is_undefined();
}
bool test_sequence(const Value& value, const CallArgs&) {
  return value.is_string() || value.is_list() || value.is_dict() || value.is_undefined();
}
bool test_escaped(const Value&, const CallArgs&) { return false; }

int64_t integer_operand(const Value& value, const char* test) {
  if (value.is_undefined()) fail_undefined(value);
  if (!value.is_number() || value.is_float()) throw RuntimeError(std::string("test '") + test + "' needs an integer");
  return value.as_int();
}

bool test_odd(const Value& value, const CallArgs&) { return integer_operand(value, "odd") % 2 != 0; }
bool test_even(const Value& value, const CallArgs&) { return integer_operand(value, "even") % 2 == 0; }
bool test_divisibleby(const Value& value, const CallArgs& args) {
  int64_t divisor = integer_operand(argument(args, "divisibleby"), "divisibleby");
  if (divisor == 0) throw RuntimeError("integer division or modulo by zero");
  return integer_operand(value, "divisibleby") % divisor == 0;
}

bool test_lower(const Value& value, const CallArgs&) {
  std::string text = value.str();
  bool has_cased = false;
  for (unsigned char c : text) {
    if (std::isupper(c)) return false;
    has_cased = has_cased || std::islower(c);
  }
  return has_cased;
}
bool test_upper(const Value& value, const CallArgs&) {
  std::string text = value.str();
  bool has_cased = false;
  for (unsigned char c : text) {
    if (std::islower(c)) return false;
    has_cased = has_cased || std::isupper(c);
  }
  return has_cased;
}

bool test_eq(const Value& value, const CallArgs& args) { return compare_op("==", value, argument(args, "eq")); }
bool test_ne(const Value& value, const CallArgs& args) { return compare_op("!=", value, argument(args, "ne")); }
bool test_lt(const Value& value, const CallArgs& args) { return compare_op("<", value, argument(args, "lt")); }
bool test_le(const Value& value, const CallArgs& args) { return compare_op("<=", value, argument(args, "le")); }
bool test_gt(const Value& value, const CallArgs& args) { return compare_op(">", value, argument(args, "gt")); }
bool test_ge(const Value& value, const CallArgs& args) { return compare_op(">=", value, argument(args, "ge")); }
bool test_in(const Value& value, const CallArgs& args) { return compare_op("in", value, argument(args, "in")); }

bool test_sameas(const Value& value, const CallArgs& args) {
  const Value& other = argument(args, "sameas");
  if (value.kind() != other.kind()) return false;
  switch (value.kind()) {
    case Value::Kind::kNone:
    case Value::Kind::kUndefined: return true;
    case Value::Kind::kBool: return value.as_bool() == other.as_bool();
    case Value::Kind::kList: return &value.as_list() == &other.as_list();
    case Value::Kind::kDict:
    case Value::Kind::kNamespace: return &value.as_dict() == &other.as_dict();
    default: return values_equal(value, other);
  }
}

bool test_filter(const Value& value, const CallArgs&) { return value.is_string() && has_filter(value.as_string()); }
bool test_test(const Value& value, const CallArgs&) { return value.is_string() && has_test(value.as_string()); }

const std::map<std::string, Test>& tests() {
  static const std::map<std::string, Test> table = {
      {"defined", test_defined}, {"undefined", test_undefined}, {"none", test_none},
      {"boolean", test_boolean}, {"true", test_true},           {"false", test_false},
      {"integer", test_integer}, {"float", test_float},         {"number", test_number},
      {"string", test_string},   {"mapping", test_mapping},     {"iterable", test_iterable},
      {"sequence", test_sequence}, {"callable", test_callable}, {"escaped", test_escaped},
      {"odd", test_odd},         {"even", test_even},           {"divisibleby", test_divisibleby},
      {"lower", test_lower},     {"upper", test_upper},         {"sameas", test_sameas},
      {"eq", test_eq},           {"equalto", test_eq},          {"==", test_eq},
      {"ne", test_ne},           {"!=", test_ne},               {"lt", test_lt},
      {"lessthan", test_lt},     {"<", test_lt},                {"le", test_le},
      {"<=", test_le},           {"gt", test_gt},               {"greaterthan", test_gt},
      {">", test_gt},            {"ge", test_ge},               {">=", test_ge},
      {"in", test_in},           {"filter", test_filter},       {"test", test_test},
  };
  return table;
}

}  // namespace

bool has_test(const std::string& name) { return tests().count(name) != 0; }

bool apply_test(const std::string& name, const Value& value, const CallArgs& args) {
  auto it = tests().find(name);
  if (it == tests().end()) throw RuntimeError("unsupported test '" + name + "'");
  return it->second(value, args);
}

}  // namespace llmesh::text::jinja
