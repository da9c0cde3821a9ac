// Python methods templates call on str, list and dict values
// (`content.split('</think>')`, `message.items()`, `text.startswith('<')`).
// Case mapping covers Latin, Greek and Cyrillic letters (see unicode.h).
#include <algorithm>
#include <cctype>
#include <optional>

#include "text/jinja/builtins.h"
#include "text/jinja/string_ops.h"
#include "text/jinja/unicode.h"

namespace llmesh::text::jinja {
namespace {

std::string string_arg(const CallArgs& args, size_t position, const std::string& name, const char* method) {
  const Value* value = args.get(position, name);
  if (!value || !value->is_string())
    throw RuntimeError(std::string(method) + "() argument must be str, not " + (value ? value->type_name() : "nothing"));
  return value->as_string();
}

std::optional<std::string> optional_chars(const CallArgs& args, const char* method) {
  const Value* chars = args.get(0, "chars");
  if (!chars || chars->is_none()) return std::nullopt;
  if (!chars->is_string()) throw RuntimeError(std::string(method) + " arg must be None or str");
  return chars->as_string();
}

int64_t int_arg(const CallArgs& args, size_t position, const std::string& name, int64_t if_missing) {
  const Value* value = args.get(position, name);
  if (!value || value->is_none()) return if_missing;
  if (!value->is_number() || value->is_float()) throw RuntimeError("an integer is required for '" + name + "'");
  return value->as_int();
}

// startswith/endswith accept a str or a tuple (list) of str.
bool affix_matches(const std::string& text, const Value& affix, bool at_start) {
  auto matches = [&](const std::string& candidate) {
    if (candidate.size() > text.size()) return false;
    return at_start ? text.compare(0, candidate.size(), candidate) == 0
                    : text.compare(text.size() - candidate.size(), candidate.size(), candidate) == 0;
  };
  if (affix.is_string()) return matches(affix.as_string());
  if (affix.is_list()) {
    for (const Value& item : affix.as_list()) {
      if (!item.is_string()) throw RuntimeError("tuple for startswith/endswith must only contain str");
      if (matches(item.as_string())) return true;
    }
    return false;
  }
  throw RuntimeError("startswith/endswith first arg must be str or a tuple of str, not " + affix.type_name());
}

// Python str.format with positional {} / {0} and keyword {name} fields (no format specs).
std::string python_format(const std::string& pattern, const CallArgs& args) {
  std::string out;
  size_t next_auto = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '{' && i + 1 < pattern.size() && pattern[i + 1] == '{') {
      out.push_back('{');
      ++i;
    } else if (c == '}' && i + 1 < pattern.size() && pattern[i + 1] == '}') {
      out.push_back('}');
      ++i;
    } else if (c == '{') {
      size_t close = pattern.find('}', i);
      if (close == std::string::npos) throw RuntimeError("Single '{' encountered in format string");
      std::string field = pattern.substr(i + 1, close - i - 1);
      if (field.find(':') != std::string::npos || field.find('!') != std::string::npos)
        throw RuntimeError("unsupported construct: format spec in str.format");
      const Value* value = nullptr;
      if (field.empty()) {
        value = next_auto < args.positional.size() ? &args.positional[next_auto] : nullptr;
        ++next_auto;
      } else if (std::all_of(field.begin(), field.end(), [](char d) { return std::isdigit(static_cast<unsigned char>(d)); })) {
        size_t index = std::stoul(field);
        value = index < args.positional.size() ? &args.positional[index] : nullptr;
      } else {
        value = args.get_keyword(field);
      }
      if (!value) throw RuntimeError("str.format: missing argument for field '" + field + "'");
      out += value->str();
      i = close;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

Value string_method(const std::string& text, const std::string& name) {
  using Body = std::function<Value(const CallArgs&)>;
  Body body;
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    bool left = name != "rstrip", right = name != "lstrip";
    body = [text, left, right, name](const CallArgs& args) {
      return Value(python_strip(text, optional_chars(args, name.c_str()), left, right));
    };
  } else if (name == "split" || name == "rsplit") {
    bool from_right = name == "rsplit";
    body = [text, from_right](const CallArgs& args) {
      const Value* separator = args.get(0, "sep");
      int64_t max_split = int_arg(args, 1, "maxsplit", -1);
      std::vector<std::string> parts;
      if (!separator || separator->is_none()) {
        parts = python_split_whitespace(text, max_split, from_right);
      } else {
        if (!separator->is_string()) throw RuntimeError("must be str or None, not " + separator->type_name());
        if (separator->as_string().empty()) throw RuntimeError("empty separator");
        parts = python_split(text, separator->as_string(), max_split, from_right);
      }
      ValueList out;
      for (auto& part : parts) out.emplace_back(std::move(part));
      return Value(std::move(out));
    };
  } else if (name == "splitlines") {
    body = [text](const CallArgs&) {
      ValueList out;
      for (auto& line : python_splitlines(text)) out.emplace_back(std::move(line));
      return Value(std::move(out));
    };
  } else if (name == "startswith" || name == "endswith") {
    bool at_start = name == "startswith";
    body = [text, at_start](const CallArgs& args) {
      const Value* affix = args.get(0, "prefix");
      if (!affix) throw RuntimeError("startswith/endswith takes at least 1 argument");
      return Value(affix_matches(text, *affix, at_start));
    };
  } else if (name == "replace") {
    body = [text](const CallArgs& args) {
      return Value(python_replace(text, string_arg(args, 0, "old", "replace"), string_arg(args, 1, "new", "replace"),
                                  int_arg(args, 2, "count", -1)));
    };
  } else if (name == "upper" || name == "lower" || name == "title" || name == "capitalize" || name == "swapcase") {
    body = [text, name](const CallArgs&) {
      if (name == "upper") return Value(unicode_upper(text));
      if (name == "lower") return Value(unicode_lower(text));
      if (name == "title") return Value(python_title(text));
      if (name == "capitalize") return Value(python_capitalize(text));
      std::string out = text;
      for (char& c : out) c = std::isupper(static_cast<unsigned char>(c)) ? std::tolower(c) : std::toupper(c);
      return Value(out);
    };
  } else if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count") {
    body = [text, name](const CallArgs& args) {
      std::string needle = string_arg(args, 0, "sub", name.c_str());
      if (name == "count") return Value(python_count(text, needle));
      size_t at = name[0] == 'r' ? text.rfind(needle) : text.find(needle);
      if (at == std::string::npos) {
        if (name == "index" || name == "rindex") throw RuntimeError("substring not found");
        return Value(int64_t{-1});
      }
      return Value(static_cast<int64_t>(utf8_length(text.substr(0, at))));
    };
  } else if (name == "join") {
    body = [text](const CallArgs& args) {
      const Value* items = args.get(0, "iterable");
      if (!items) throw RuntimeError("join() takes exactly one argument");
      std::string out;
      bool first = true;
      for (const Value& item : iterate(*items)) {
        if (!item.is_string()) throw RuntimeError("sequence item: expected str instance, " + item.type_name() + " found");
        if (!first) out += text;
        first = false;
        out += item.as_string();
      }
      return Value(out);
    };
  } else if (name == "format") {
    body = [text](const CallArgs& args) { return Value(python_format(text, args)); };
  } else if (name == "isdigit" || name == "isalpha" || name == "isalnum" || name == "isspace" || name == "isupper" ||
             name == "islower") {
    body = [text, name](const CallArgs&) { return Value(python_is_class(text, name)); };
  } else {
    return Value::undefined("'str object' has no attribute '" + name + "'");
  }
  return Value(Function(std::move(body)));
}

Value list_method(const Value& list, const std::string& name) {
  if (name == "append") {
    return Value(Function([list](const CallArgs& args) {
      if (args.positional.size() != 1) throw RuntimeError("append() takes exactly one argument");
      check_storable(&list.as_list(), args.positional[0]);
      list.as_list().push_back(args.positional[0]);
      return Value::none();
    }));
  }
  if (name == "index" || name == "count") {
    return Value(Function([list, name](const CallArgs& args) {
      if (args.positional.size() != 1) throw RuntimeError(name + "() takes exactly one argument");
      int64_t count = 0;
      const ValueList& items = list.as_list();
      for (size_t i = 0; i < items.size(); ++i) {
        if (!values_equal(items[i], args.positional[0])) continue;
        if (name == "index") return Value(static_cast<int64_t>(i));
        ++count;
      }
      if (name == "index") throw RuntimeError("value is not in list");
      return Value(count);
    }));
  }
  return Value::undefined("'list object' has no attribute '" + name + "'");
}

Value dict_method(const Value& dict, const std::string& name) {
  if (name == "items" || name == "keys" || name == "values") {
    return Value(Function([dict, name](const CallArgs&) {
      ValueList out;
      for (const auto& [key, value] : dict.as_dict().entries()) {
        if (name == "items") out.push_back(Value::make_tuple({Value(key), value}));
        else if (name == "keys") out.emplace_back(key);
        else out.push_back(value);
      }
      return Value(std::move(out));
    }));
  }
  if (name == "get") {
    return Value(Function([dict](const CallArgs& args) {
      const Value* key = args.get(0, "key");
      if (!key) throw RuntimeError("get expected at least 1 argument");
      const Value* fallback = args.get(1, "default");
      if (key->is_string())
        if (const Value* found = dict.as_dict().find(key->as_string())) return *found;
      return fallback ? *fallback : Value::none();
    }));
  }
  return Value::undefined("'dict object' has no attribute '" + name + "'");
}

}  // namespace

Value bound_method(const Value& receiver, const std::string& name) {
  switch (receiver.kind()) {
    case Value::Kind::kString: return string_method(receiver.as_string(), name);
    case Value::Kind::kList: return list_method(receiver, name);
    case Value::Kind::kDict: return dict_method(receiver, name);
    default: return Value::undefined("'" + receiver.type_name() + " object' has no attribute '" + name + "'");
  }
}

}  // namespace llmesh::text::jinja
