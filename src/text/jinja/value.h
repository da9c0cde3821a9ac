// The values a Jinja template computes with, modelled on the Python objects
// jinja2 works on, because chat templates are written (and their output is
// defined) against Python semantics: `{{ 1.0 }}` prints "1.0", `{{ none }}`
// prints "None", `{{ [1, 'a'] }}` prints "[1, 'a']", True == 1, and lists and
// dicts are shared by reference (a namespace or list mutated in a loop is seen
// outside it).
//
// Undefined follows jinja2's default Undefined: falsy, prints "", iterates as
// empty, has length 0, but arithmetic, calls, attribute access and subscripts
// on it are errors.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace llmesh::text::jinja {

// A runtime error without position; the interpreter adds "<name> line N: ".
class RuntimeError : public std::runtime_error {
 public:
  explicit RuntimeError(const std::string& message) : std::runtime_error(message) {}
};

class Value;
using ValueList = std::vector<Value>;

// An insertion-ordered str -> Value map (Python dicts keep insertion order,
// and tojson must print keys in that order).
class ValueDict {
 public:
  const Value* find(const std::string& key) const;
  Value* find(const std::string& key);
  void set(const std::string& key, Value value);
  size_t size() const;  // defined below Value (clang needs Value complete here)
  const std::vector<std::pair<std::string, Value>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, Value>> entries_;
};

struct CallArgs {
  ValueList positional;
  std::vector<std::pair<std::string, Value>> keyword;

  // The argument at `position` or named `name`, or nullptr when neither was passed.
  const Value* get(size_t position, const std::string& name) const;
  const Value* get_keyword(const std::string& name) const;
};

using Function = std::function<Value(const CallArgs&)>;

struct Undefined {
  std::string name;  // what was looked up, for error messages
};

class Value {
 public:
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kNamespace, kFunction };

  Value() : data_(Undefined{}) {}
  static Value undefined(std::string name = "") { return Value(Undefined{std::move(name)}); }
  static Value none() { return Value(nullptr); }
  Value(std::nullptr_t) : data_(nullptr) {}
  Value(bool value) : data_(value) {}
  Value(int value) : data_(static_cast<int64_t>(value)) {}
  Value(int64_t value) : data_(value) {}
  Value(double value) : data_(value) {}
  Value(const char* value) : data_(std::string(value)) {}
  Value(std::string value) : data_(std::move(value)) {}
  Value(ValueList list) : data_(ListBox{std::make_shared<ValueList>(std::move(list)), false}) {}
  Value(ValueDict dict) : data_(DictBox{std::make_shared<ValueDict>(std::move(dict)), false}) {}
  Value(Function function) : data_(std::make_shared<Function>(std::move(function))) {}
  // A Python tuple: a list that prints as "(1, 2)" (dict.items() pairs, `(a, b)` literals).
  static Value make_tuple(ValueList items);
  // A jinja2 namespace(): attribute-settable, prints like an object.
  static Value make_namespace(ValueDict attributes);

  Kind kind() const;
  bool is_undefined() const { return kind() == Kind::kUndefined; }
  bool is_none() const { return kind() == Kind::kNone; }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_int() const { return kind() == Kind::kInt; }
  bool is_float() const { return kind() == Kind::kFloat; }
  bool is_number() const { return is_int() || is_float() || is_bool(); }  // Python: bool is an int
  bool is_string() const { return kind() == Kind::kString; }
  bool is_list() const { return kind() == Kind::kList; }  // list or tuple
  bool is_tuple() const { return is_list() && std::get<ListBox>(data_).is_tuple; }
  bool is_dict() const { return kind() == Kind::kDict; }
  bool is_namespace() const { return kind() == Kind::kNamespace; }
  bool is_function() const { return kind() == Kind::kFunction; }

  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const;   // int or bool
  double as_double() const;  // int, bool or float
  const std::string& as_string() const { return std::get<std::string>(data_); }
  ValueList& as_list() const { return *std::get<ListBox>(data_).list; }
  ValueDict& as_dict() const { return *std::get<DictBox>(data_).dict; }  // dict or namespace
  const Function& as_function() const { return *std::get<std::shared_ptr<Function>>(data_); }
  const std::string& undefined_name() const { return std::get<Undefined>(data_).name; }

  // Python truthiness.
  bool truthy() const;
  // Python str(): what `{{ value }}` prints (Undefined prints "").
  std::string str() const;
  // Python repr(), used for the items of a printed list or dict.
  std::string repr() const;
  // The Python type name ("str", "list", "dict", ...) for error messages.
  std::string type_name() const;

  static Value from_json(const nlohmann::json& json);
  static Value from_json(const nlohmann::ordered_json& json);

 private:
  struct ListBox {
    std::shared_ptr<ValueList> list;
    bool is_tuple;
  };
  struct DictBox {
    std::shared_ptr<ValueDict> dict;
    bool is_namespace;
  };
  explicit Value(Undefined undefined) : data_(std::move(undefined)) {}

  std::variant<Undefined, std::nullptr_t, bool, int64_t, double, std::string, ListBox, DictBox,
               std::shared_ptr<Function>>
      data_;
};

inline size_t ValueDict::size() const { return entries_.size(); }

// Values may nest this deep at most (lists and dicts inside each other): printing,
// comparing and freeing a value recurse through it.
inline constexpr int kMaxValueDepth = 512;

// RuntimeError when storing `value` into `container` (the ValueList or ValueDict
// being mutated: list.append, a namespace attribute) would make the container
// hold itself (Python prints such a list as [[...]]; here printing it would never
// end) or nest values deeper than kMaxValueDepth.
void check_storable(const void* container, const Value& value);

// Python ==.
bool values_equal(const Value& a, const Value& b);

// Python repr() of a float ("1.0", "0.1", "1e+16", "inf").
std::string format_python_float(double value);

}  // namespace llmesh::text::jinja
