// The operations templates apply to values: operators, attribute and item
// access, methods of str/list/dict, filters, tests and global functions.
// Each throws RuntimeError with a jinja2-like message; the interpreter adds
// the template name and line.
#pragma once

#include <string>

#include "text/jinja/value.h"

namespace llmesh::text::jinja {

// ---- operators.cpp ----
// Arithmetic and string operators: + - * / // % ** ~
Value binary_op(const std::string& op, const Value& left, const Value& right);
// Comparisons: == != < <= > >= in, not in
bool compare_op(const std::string& op, const Value& left, const Value& right);
Value negate(const Value& value);
// Python's printf-style `pattern % arguments` (a tuple is several arguments).
std::string printf_format(const std::string& pattern, const Value& arguments);
// Python obj[start:stop:step] on a list or str; null parts passed as Undefined/None.
Value slice(const Value& object, const Value& start, const Value& stop, const Value& step);
// jinja2's environment.getattr / getitem: attribute first then item, and the reverse.
Value get_attribute(const Value& object, const std::string& name);
Value get_item(const Value& object, const Value& key);
// Items of an iterable (list items, dict keys, str characters); Undefined is empty.
ValueList iterate(const Value& value);
// Python len().
int64_t length_of(const Value& value);
// Throws the "'x' is undefined" error an operation on Undefined raises.
[[noreturn]] void fail_undefined(const Value& value);

// ---- methods.cpp ----
// The bound method `name` of a str, list or dict, or Undefined when it has none.
Value bound_method(const Value& receiver, const std::string& name);

// ---- filters.cpp / tests.cpp ----
bool has_filter(const std::string& name);
Value apply_filter(const std::string& name, const Value& value, const CallArgs& args);
bool has_test(const std::string& name);
bool apply_test(const std::string& name, const Value& value, const CallArgs& args);

// ---- json_dump.cpp ----
// Python json.dumps(value, ensure_ascii=False, indent=indent, separators=..., sort_keys=...)
// as HF transformers' tojson filter calls it. indent < 0 means None.
struct JsonDumpOptions {
  int indent = -1;
  std::string item_separator;  // empty: ", " (no indent) or "," (indent)
  std::string key_separator = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;  // escape non-ASCII as \uXXXX (HF passes False by default)
};
std::string json_dumps(const Value& value, const JsonDumpOptions& options);

// ---- globals.cpp ----
// range, dict, namespace, raise_exception, strftime_now, ...
ValueDict make_globals();

}  // namespace llmesh::text::jinja
