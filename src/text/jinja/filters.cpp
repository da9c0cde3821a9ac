// jinja2's built-in filters (the ones chat templates use), with HF's tojson.
#include <algorithm>
#include <cmath>
#include <map>

#include "text/jinja/builtins.h"
#include "text/jinja/string_ops.h"
#include "text/jinja/unicode.h"

namespace llmesh::text::jinja {
namespace {

using Filter = Value (*)(const Value& value, const CallArgs& args);

bool bool_arg(const CallArgs& args, size_t position, const std::string& name, bool if_missing) {
  const Value* value = args.get(position, name);
  return value ? value->truthy() : if_missing;
}

// jinja2's make_attrgetter: "a.b.0" looked up item-first, part by part.
Value attribute_path(const Value& item, const std::string& path) {
  Value current = item;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    bool is_index = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    current = is_index ? get_item(current, Value(static_cast<int64_t>(std::stoll(part)))) : get_item(current, Value(part));
    if (dot == std::string::npos) return current;
    start = dot + 1;
  }
}

CallArgs shift_args(const CallArgs& args, size_t count) {
  CallArgs rest;
  for (size_t i = count; i < args.positional.size(); ++i) rest.positional.push_back(args.positional[i]);
  rest.keyword = args.keyword;
  return rest;
}

std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

Value filter_trim(const Value& value, const CallArgs& args) {
  const Value* chars = args.get(0, "chars");
  std::optional<std::string> strip_set;
  if (chars && !chars->is_none()) strip_set = chars->str();
  return Value(python_strip(value.str(), strip_set, true, true));
}

Value filter_length(const Value& value, const CallArgs&) { return Value(length_of(value)); }
Value filter_upper(const Value& value, const CallArgs&) { return Value(unicode_upper(value.str())); }
Value filter_lower(const Value& value, const CallArgs&) { return Value(unicode_lower(value.str())); }
Value filter_capitalize(const Value& value, const CallArgs&) { return Value(python_capitalize(value.str())); }
Value filter_string(const Value& value, const CallArgs&) { return Value(value.str()); }
Value filter_safe(const Value& value, const CallArgs&) { return value; }
Value filter_escape(const Value& value, const CallArgs&) { return Value(html_escape(value.str())); }

// jinja2's title: upper-cases the first letter of each word split at spaces, dashes and brackets.
Value filter_title(const Value& value, const CallArgs&) {
  std::string out;
  bool word_start = true;
  for (char32_t c : utf8_decode(value.str())) {
    bool boundary = is_python_space(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
    if (boundary) {
      utf8_append(out, c);
      word_start = true;
      continue;
    }
    utf8_append(out, word_start ? to_upper(c) : to_lower(c));
    word_start = false;
  }
  return Value(out);
}

Value filter_replace(const Value& value, const CallArgs& args) {
  const Value* old_text = args.get(0, "old");
  const Value* new_text = args.get(1, "new");
  if (!old_text || !new_text) throw RuntimeError("replace filter needs 'old' and 'new'");
  const Value* count = args.get(2, "count");
  int64_t limit = count && !count->is_none() ? count->as_int() : -1;
  return Value(python_replace(value.str(), old_text->str(), new_text->str(), limit));
}

Value filter_default(const Value& value, const CallArgs& args) {
  const Value* fallback = args.get(0, "default_value");
  bool boolean = bool_arg(args, 1, "boolean", false);
  if (value.is_undefined() || (boolean && !value.truthy())) return fallback ? *fallback : Value("");
  return value;
}

Value filter_join(const Value& value, const CallArgs& args) {
  const Value* separator = args.get(0, "d");
  const Value* attribute = args.get(1, "attribute");
  std::string out;
  bool first = true;
  for (const Value& item : iterate(value)) {
    if (!first && separator) out += separator->str();
    first = false;
    out += attribute ? attribute_path(item, attribute->str()).str() : item.str();
  }
  return Value(out);
}

Value filter_first(const Value& value, const CallArgs&) {
  ValueList items = iterate(value);
  if (items.empty()) return Value::undefined("No first item, sequence was empty.");
  return items.front();
}

Value filter_last(const Value& value, const CallArgs&) {
  ValueList items = iterate(value);
  if (items.empty()) return Value::undefined("No last item, sequence was empty.");
  return items.back();
}

Value filter_list(const Value& value, const CallArgs&) { return Value(iterate(value)); }

Value filter_reverse(const Value& value, const CallArgs&) {
  if (value.is_string()) {
    std::u32string code_points = utf8_decode(value.as_string());
    std::reverse(code_points.begin(), code_points.end());
    return Value(utf8_encode(code_points));
  }
  ValueList items = iterate(value);
  std::reverse(items.begin(), items.end());
  return Value(std::move(items));
}

Value filter_items(const Value& value, const CallArgs&) {
  if (value.is_undefined()) return Value(ValueList{});
  if (!value.is_dict()) throw RuntimeError("Can only get item pairs from a mapping.");
  ValueList out;
  for (const auto& [key, item] : value.as_dict().entries()) out.push_back(Value::make_tuple({Value(key), item}));
  return Value(std::move(out));
}

Value filter_map(const Value& value, const CallArgs& args) {
  ValueList out;
  if (const Value* attribute = args.get_keyword("attribute")) {
    const Value* fallback = args.get_keyword("default");
    for (const Value& item : iterate(value)) {
      Value mapped = attribute_path(item, attribute->str());
      out.push_back(mapped.is_undefined() && fallback ? *fallback : mapped);
    }
    return Value(std::move(out));
  }
  if (args.positional.empty()) throw RuntimeError("map requires a filter argument");
  std::string filter_name = args.positional[0].str();
  CallArgs rest = shift_args(args, 1);
  for (const Value& item : iterate(value)) out.push_back(apply_filter(filter_name, item, rest));
  return Value(std::move(out));
}

Value select_items(const Value& value, const CallArgs& args, bool by_attribute, bool keep_matching) {
  size_t consumed = 0;
  std::string attribute;
  if (by_attribute) {
    if (args.positional.empty()) throw RuntimeError("selectattr/rejectattr need an attribute name");
    attribute = args.positional[0].str();
    consumed = 1;
  }
  std::string test_name;
  if (args.positional.size() > consumed) test_name = args.positional[consumed].str();
  CallArgs test_args = shift_args(args, consumed + 1);
  ValueList out;
  for (const Value& item : iterate(value)) {
    Value subject = by_attribute ? attribute_path(item, attribute) : item;
    bool passed = test_name.empty() ? subject.truthy() : apply_test(test_name, subject, test_args);
    if (passed == keep_matching) out.push_back(item);
  }
  return Value(std::move(out));
}

Value filter_select(const Value& value, const CallArgs& args) { return select_items(value, args, false, true); }
Value filter_reject(const Value& value, const CallArgs& args) { return select_items(value, args, false, false); }
Value filter_selectattr(const Value& value, const CallArgs& args) { return select_items(value, args, true, true); }
Value filter_rejectattr(const Value& value, const CallArgs& args) { return select_items(value, args, true, false); }

// A width or indent argument: negative counts as 0 (Python's ' ' * -1 == ''); over
// kMaxWidth is an error (a runaway template, not a layout).
size_t width_value(const Value& width, const char* filter) {
  constexpr int64_t kMaxWidth = 1 << 16;
  const int64_t n = width.as_int();
  if (n > kMaxWidth) throw RuntimeError(std::string(filter) + " width " + std::to_string(n) + " is too large");
  return n < 0 ? 0 : static_cast<size_t>(n);
}

// HF: json.dumps(x, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys).
Value filter_tojson(const Value& value, const CallArgs& args) {
  JsonDumpOptions options;
  if (const Value* indent = args.get_keyword("indent")) {
    if (indent->is_string()) throw RuntimeError("unsupported construct: tojson with a string indent");
    if (!indent->is_none()) options.indent = static_cast<int>(width_value(*indent, "tojson indent"));
  } else if (args.positional.size() > 1) {
    if (!args.positional[1].is_none()) options.indent = static_cast<int>(width_value(args.positional[1], "tojson indent"));
  }
  if (const Value* separators = args.get_keyword("separators"); separators && !separators->is_none()) {
    if (!separators->is_list() || separators->as_list().size() != 2) throw RuntimeError("tojson separators must be a pair");
    options.item_separator = separators->as_list()[0].str();
    options.key_separator = separators->as_list()[1].str();
  }
  if (const Value* sort_keys = args.get_keyword("sort_keys")) options.sort_keys = sort_keys->truthy();
  const Value* ensure_ascii = args.get(0, "ensure_ascii");
  options.ensure_ascii = ensure_ascii && ensure_ascii->truthy();
  return Value(json_dumps(value, options));
}

Value filter_int(const Value& value, const CallArgs& args) {
  const Value* fallback = args.get(0, "default");
  Value default_value = fallback ? *fallback : Value(int64_t{0});
  int base = static_cast<int>(args.get(1, "base") ? args.get(1, "base")->as_int() : 10);
  if (value.is_bool() || value.is_int()) return Value(value.as_int());
  // A float outside the int64 range (or NaN) has no int64 value: the default, as for other bad input.
  auto float_to_int = [&](double x) {
    x = std::trunc(x);
    return x >= -9.2e18 && x <= 9.2e18 ? Value(static_cast<int64_t>(x)) : default_value;
  };
  if (value.is_float()) return float_to_int(value.as_double());
  if (value.is_string()) {
    std::string text = python_strip(value.as_string(), std::nullopt, true, true);
    try {
      size_t used = 0;
      int64_t parsed = std::stoll(text, &used, base);
      if (used == text.size()) return Value(parsed);
    } catch (const std::exception&) {
    }
    try {
      size_t used = 0;
      double parsed = std::stod(text, &used);
      if (used == text.size() && std::isfinite(parsed)) return float_to_int(parsed);
    } catch (const std::exception&) {
    }
  }
  return default_value;
}

Value filter_float(const Value& value, const CallArgs& args) {
  const Value* fallback = args.get(0, "default");
  Value default_value = fallback ? *fallback : Value(0.0);
  if (value.is_number()) return Value(value.as_double());
  if (value.is_string()) {
    std::string text = python_strip(value.as_string(), std::nullopt, true, true);
    try {
      size_t used = 0;
      double parsed = std::stod(text, &used);
      if (used == text.size()) return Value(parsed);
    } catch (const std::exception&) {
    }
  }
  return default_value;
}

Value filter_abs(const Value& value, const CallArgs&) {
  if (value.is_float()) return Value(std::fabs(value.as_double()));
  if (value.is_number()) return Value(value.as_int() < 0 ? -value.as_int() : value.as_int());
  throw RuntimeError("bad operand type for abs(): '" + value.type_name() + "'");
}

Value filter_round(const Value& value, const CallArgs& args) {
  int64_t precision = args.get(0, "precision") ? args.get(0, "precision")->as_int() : 0;
  std::string method = args.get(1, "method") ? args.get(1, "method")->str() : "common";
  if (!value.is_number()) throw RuntimeError("round filter needs a number, not " + value.type_name());
  double scale = std::pow(10.0, static_cast<double>(precision));
  double scaled = value.as_double() * scale;
  double rounded;
  if (method == "common") rounded = std::nearbyint(scaled);  // Python round(): ties to even
  else if (method == "ceil") rounded = std::ceil(scaled);
  else if (method == "floor") rounded = std::floor(scaled);
  else throw RuntimeError("method must be common, ceil or floor");
  if (method == "common" && !value.is_float()) return Value(value.as_int());  // round(int, n) stays int
  return Value(rounded / scale);
}

Value filter_indent(const Value& value, const CallArgs& args) {
  const Value* width = args.get(0, "width");
  std::string indentation =
      width ? (width->is_string() ? width->as_string() : std::string(width_value(*width, "indent"), ' ')) : "    ";
  bool first = bool_arg(args, 1, "first", false);
  bool blank = bool_arg(args, 2, "blank", false);
  std::vector<std::string> lines = python_splitlines(value.str() + "\n");
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += "\n";
    bool indent_line = i > 0 && (blank || !lines[i].empty());
    if (indent_line) out += indentation;
    out += lines[i];
  }
  if (first) out = indentation + out;
  return Value(out);
}

Value filter_batch(const Value& value, const CallArgs& args) {
  const Value* size_value = args.get(0, "linecount");
  if (!size_value || size_value->as_int() <= 0) throw RuntimeError("batch needs a positive line count");
  size_t size = static_cast<size_t>(size_value->as_int());
  const Value* fill = args.get(1, "fill_with");
  ValueList out, current;
  for (const Value& item : iterate(value)) {
    current.push_back(item);
    if (current.size() == size) {
      out.emplace_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) {
    if (fill && !fill->is_none()) {
      // Padding is the one part whose size the template alone sets: bound it.
      constexpr size_t kMaxFill = 1 << 16;
      if (size > kMaxFill) throw RuntimeError("batch line count " + std::to_string(size) + " is too large to fill");
      while (current.size() < size) current.push_back(*fill);
    }
    out.emplace_back(std::move(current));
  }
  return Value(std::move(out));
}

Value sort_key(const Value& item, bool case_sensitive) {
  if (!case_sensitive && item.is_string()) return Value(unicode_lower(item.as_string()));
  return item;
}

Value filter_sort(const Value& value, const CallArgs& args) {
  bool reverse = bool_arg(args, 0, "reverse", false);
  bool case_sensitive = bool_arg(args, 1, "case_sensitive", false);
  const Value* attribute = args.get(2, "attribute");
  ValueList items = iterate(value);
  auto key = [&](const Value& item) {
    return sort_key(attribute && !attribute->is_none() ? attribute_path(item, attribute->str()) : item, case_sensitive);
  };
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    return reverse ? compare_op("<", key(b), key(a)) : compare_op("<", key(a), key(b));
  });
  return Value(std::move(items));
}

Value filter_dictsort(const Value& value, const CallArgs& args) {
  bool case_sensitive = bool_arg(args, 0, "case_sensitive", false);
  std::string by = args.get(1, "by") ? args.get(1, "by")->str() : "key";
  bool reverse = bool_arg(args, 2, "reverse", false);
  ValueList pairs = filter_items(value, CallArgs{}).as_list();
  size_t index = by == "value" ? 1 : 0;
  std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& a, const Value& b) {
    Value left = sort_key(a.as_list()[index], case_sensitive), right = sort_key(b.as_list()[index], case_sensitive);
    return reverse ? compare_op("<", right, left) : compare_op("<", left, right);
  });
  return Value(std::move(pairs));
}

Value filter_unique(const Value& value, const CallArgs& args) {
  bool case_sensitive = bool_arg(args, 0, "case_sensitive", false);
  ValueList out, seen;
  for (const Value& item : iterate(value)) {
    Value key = sort_key(item, case_sensitive);
    bool duplicate = std::any_of(seen.begin(), seen.end(), [&](const Value& other) { return values_equal(other, key); });
    if (duplicate) continue;
    seen.push_back(key);
    out.push_back(item);
  }
  return Value(std::move(out));
}

Value filter_sum(const Value& value, const CallArgs& args) {
  const Value* attribute = args.get(0, "attribute");
  Value total = args.get(1, "start") ? *args.get(1, "start") : Value(int64_t{0});
  for (const Value& item : iterate(value))
    total = binary_op("+", total, attribute && !attribute->is_none() ? attribute_path(item, attribute->str()) : item);
  return total;
}

Value extreme(const Value& value, const CallArgs& args, bool want_max) {
  bool case_sensitive = bool_arg(args, 0, "case_sensitive", false);
  const Value* attribute = args.get(1, "attribute");
  ValueList items = iterate(value);
  if (items.empty()) return Value::undefined(want_max ? "No aggregated item, sequence was empty." : "No aggregated item, sequence was empty.");
  auto key = [&](const Value& item) {
    return sort_key(attribute && !attribute->is_none() ? attribute_path(item, attribute->str()) : item, case_sensitive);
  };
  Value best = items[0];
  for (size_t i = 1; i < items.size(); ++i) {
    bool better = want_max ? compare_op(">", key(items[i]), key(best)) : compare_op("<", key(items[i]), key(best));
    if (better) best = items[i];
  }
  return best;
}

Value filter_min(const Value& value, const CallArgs& args) { return extreme(value, args, false); }
Value filter_max(const Value& value, const CallArgs& args) { return extreme(value, args, true); }

Value filter_attr(const Value& value, const CallArgs& args) {
  const Value* name = args.get(0, "name");
  if (!name) throw RuntimeError("attr filter needs a name");
  return get_attribute(value, name->str());
}

// jinja2's format filter: printf-style, `"%s-%s" | format(a, b)`.
Value filter_format(const Value& value, const CallArgs& args) {
  if (!args.keyword.empty()) throw RuntimeError("unsupported construct: format filter with keyword arguments");
  return Value(printf_format(value.str(), Value::make_tuple(args.positional)));
}

Value filter_wordcount(const Value& value, const CallArgs&) {
  return Value(static_cast<int64_t>(python_split_whitespace(value.str(), -1, false).size()));
}

const std::map<std::string, Filter>& filters() {
  static const std::map<std::string, Filter> table = {
      {"abs", filter_abs},         {"attr", filter_attr},
      {"batch", filter_batch},     {"capitalize", filter_capitalize},
      {"count", filter_length},    {"d", filter_default},
      {"default", filter_default}, {"dictsort", filter_dictsort},
      {"e", filter_escape},        {"escape", filter_escape},
      {"first", filter_first},     {"float", filter_float},
      {"forceescape", filter_escape}, {"format", filter_format},
      {"indent", filter_indent},
      {"int", filter_int},         {"items", filter_items},
      {"join", filter_join},       {"last", filter_last},
      {"length", filter_length},   {"list", filter_list},
      {"lower", filter_lower},     {"map", filter_map},
      {"max", filter_max},         {"min", filter_min},
      {"reject", filter_reject},   {"rejectattr", filter_rejectattr},
      {"replace", filter_replace}, {"reverse", filter_reverse},
      {"round", filter_round},     {"safe", filter_safe},
      {"select", filter_select},   {"selectattr", filter_selectattr},
      {"sort", filter_sort},       {"string", filter_string},
      {"sum", filter_sum},         {"title", filter_title},
      {"tojson", filter_tojson},   {"trim", filter_trim},
      {"unique", filter_unique},   {"upper", filter_upper},
      {"wordcount", filter_wordcount},
  };
  return table;
}

}  // namespace

bool has_filter(const std::string& name) { return filters().count(name) != 0; }

Value apply_filter(const std::string& name, const Value& value, const CallArgs& args) {
  auto it = filters().find(name);
  if (it == filters().end()) throw RuntimeError("unsupported filter '" + name + "'");
  return it->second(value, args);
}

}  // namespace llmesh::text::jinja
