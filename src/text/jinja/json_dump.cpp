// Python's json.dumps as HF's tojson filter calls it (ensure_ascii=False):
// non-ASCII text is written as is, floats as Python repr, and the default
// separators are ", " / ": " without indent and "," / ": " with it.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "text/jinja/builtins.h"
#include "text/jinja/unicode.h"

namespace llmesh::text::jinja {
namespace {

void dump_string_ascii(std::string& out, const std::string& text) {
  out.push_back('"');
  for (char32_t c : utf8_decode(text)) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c >= 0x20 && c < 0x7F) {
          out.push_back(static_cast<char>(c));
        } else if (c < 0x10000) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {  // UTF-16 surrogate pair, as Python writes it
          char32_t v = c - 0x10000;
          out += fmt::format("\\u{:04x}\\u{:04x}", static_cast<unsigned>(0xD800 + (v >> 10)),
                             static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
        }
    }
  }
  out.push_back('"');
}

void dump_string(std::string& out, const std::string& text) {
  out.push_back('"');
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        else out.push_back(c);
    }
  }
  out.push_back('"');
}

class JsonWriter {
 public:
  explicit JsonWriter(const JsonDumpOptions& options) : options_(options) {
    item_separator_ = !options.item_separator.empty() ? options.item_separator : options.indent >= 0 ? "," : ", ";
  }

  void write(std::string& out, const Value& value, int depth) {
    switch (value.kind()) {
      case Value::Kind::kNone: out += "null"; return;
      case Value::Kind::kBool: out += value.as_bool() ? "true" : "false"; return;
      case Value::Kind::kInt: out += std::to_string(value.as_int()); return;
      case Value::Kind::kFloat: {
        double number = value.as_double();
        if (std::isnan(number)) out += "NaN";
        else if (std::isinf(number)) out += number > 0 ? "Infinity" : "-Infinity";
        else out += format_python_float(number);
        return;
      }
      case Value::Kind::kString: string(out, value.as_string()); return;
      case Value::Kind::kList: {
        const ValueList& items = value.as_list();
        if (items.empty()) {
          out += "[]";
          return;
        }
        out.push_back('[');
        for (size_t i = 0; i < items.size(); ++i) {
          if (i > 0) out += item_separator_;
          newline(out, depth + 1);
          write(out, items[i], depth + 1);
        }
        newline(out, depth);
        out.push_back(']');
        return;
      }
      case Value::Kind::kDict: {
        std::vector<const std::pair<std::string, Value>*> entries;
        for (const auto& entry : value.as_dict().entries()) entries.push_back(&entry);
        if (entries.empty()) {
          out += "{}";
          return;
        }
        if (options_.sort_keys)
          std::stable_sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->first < b->first; });
        out.push_back('{');
        for (size_t i = 0; i < entries.size(); ++i) {
          if (i > 0) out += item_separator_;
          newline(out, depth + 1);
          string(out, entries[i]->first);
          out += options_.key_separator;
          write(out, entries[i]->second, depth + 1);
        }
        newline(out, depth);
        out.push_back('}');
        return;
      }
      default:
        throw RuntimeError("Object of type " + value.type_name() + " is not JSON serializable");
    }
  }

 private:
  void string(std::string& out, const std::string& text) const {
    if (options_.ensure_ascii) dump_string_ascii(out, text);
    else dump_string(out, text);
  }

  void newline(std::string& out, int depth) const {
    if (options_.indent < 0) return;
    out.push_back('\n');
    out.append(static_cast<size_t>(options_.indent) * depth, ' ');
  }

  const JsonDumpOptions& options_;
  std::string item_separator_;
};

}  // namespace

std::string json_dumps(const Value& value, const JsonDumpOptions& options) {
  std::string out;
  JsonWriter(options).write(out, value, 0);
  return out;
}

}  // namespace llmesh::text::jinja
