#include "text/jinja/string_ops.h"

#include <algorithm>
#include <cctype>

#include "text/jinja/unicode.h"
#include "text/jinja/value.h"

namespace llmesh::text::jinja {

std::string python_strip(const std::string& text, const std::optional<std::string>& chars, bool left, bool right) {
  std::u32string code_points = utf8_decode(text);
  std::u32string strip_set = chars ? utf8_decode(*chars) : std::u32string();
  auto strippable = [&](char32_t c) {
    return chars ? strip_set.find(c) != std::u32string::npos : is_python_space(c);
  };
  size_t begin = 0, end = code_points.size();
  if (left)
    while (begin < end && strippable(code_points[begin])) ++begin;
  if (right)
    while (end > begin && strippable(code_points[end - 1])) --end;
  return utf8_encode(code_points.substr(begin, end - begin));
}

std::vector<std::string> python_split(const std::string& text, const std::string& separator, int64_t max_split,
                                      bool from_right) {
  std::vector<std::string> parts;
  if (!from_right) {
    size_t start = 0;
    while (max_split < 0 || static_cast<int64_t>(parts.size()) < max_split) {
      size_t at = text.find(separator, start);
      if (at == std::string::npos) break;
      parts.push_back(text.substr(start, at - start));
      start = at + separator.size();
    }
    parts.push_back(text.substr(start));
    return parts;
  }
  size_t end = text.size();
  while (max_split < 0 || static_cast<int64_t>(parts.size()) < max_split) {
    if (end < separator.size()) break;
    size_t at = text.rfind(separator, end - separator.size());
    if (at == std::string::npos) break;
    parts.push_back(text.substr(at + separator.size(), end - at - separator.size()));
    end = at;
  }
  parts.push_back(text.substr(0, end));
  std::reverse(parts.begin(), parts.end());
  return parts;
}

std::vector<std::string> python_split_whitespace(const std::string& text, int64_t max_split, bool from_right) {
  std::u32string code_points = utf8_decode(text);
  if (from_right) std::reverse(code_points.begin(), code_points.end());
  std::vector<std::u32string> parts;
  size_t i = 0, n = code_points.size();
  while (i < n) {
    while (i < n && is_python_space(code_points[i])) ++i;
    if (i >= n) break;
    if (max_split >= 0 && static_cast<int64_t>(parts.size()) == max_split) {
      // The remainder, with trailing whitespace kept as Python does.
      std::u32string rest = code_points.substr(i);
      parts.push_back(rest);
      break;
    }
    size_t start = i;
    while (i < n && !is_python_space(code_points[i])) ++i;
    parts.push_back(code_points.substr(start, i - start));
  }
  std::vector<std::string> out;
  for (auto& part : parts) {
    if (from_right) std::reverse(part.begin(), part.end());
    out.push_back(utf8_encode(part));
  }
  if (from_right) std::reverse(out.begin(), out.end());
  return out;
}

std::vector<std::string> python_splitlines(const std::string& text) {
  std::vector<std::string> lines;
  std::string current;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == '\x1c' || c == '\x1d' || c == '\x1e') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      lines.push_back(current);
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  if (!current.empty()) lines.push_back(current);
  return lines;
}

namespace {

// A replace() result may be this long at most (the default RenderLimits::max_output_bytes):
// `s.replace('x', long)` multiplies lengths, so it is checked while building, not after.
constexpr size_t kMaxReplaceBytes = size_t{64} << 20;

void check_replace_size(const std::string& out) {
  if (out.size() > kMaxReplaceBytes)
    throw RuntimeError("replace() result longer than " + std::to_string(kMaxReplaceBytes) + " bytes");
}

}  // namespace

std::string python_replace(const std::string& text, const std::string& old_text, const std::string& new_text,
                           int64_t count) {
  std::string out;
  if (old_text.empty()) {
    // Python inserts `new` between every character (and at both ends).
    std::u32string code_points = utf8_decode(text);
    int64_t done = 0;
    for (char32_t c : code_points) {
      if (count < 0 || done < count) {
        out += new_text;
        ++done;
        check_replace_size(out);
      }
      utf8_append(out, c);
    }
    if (count < 0 || done < count) out += new_text;
    return out;
  }
  size_t start = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    size_t at = text.find(old_text, start);
    if (at == std::string::npos) break;
    out.append(text, start, at - start);
    out += new_text;
    check_replace_size(out);
    start = at + old_text.size();
    ++done;
  }
  out.append(text, start, std::string::npos);
  return out;
}

int64_t python_count(const std::string& text, const std::string& needle) {
  if (needle.empty()) return static_cast<int64_t>(utf8_length(text)) + 1;
  int64_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++count;
  return count;
}

std::string unicode_upper(std::string text) { return utf8_upper(text); }

std::string unicode_lower(std::string text) { return utf8_lower(text); }

std::string python_title(const std::string& text) {
  std::string out;
  bool previous_is_cased = false;
  for (char32_t c : utf8_decode(text)) {
    bool cased = is_cased_letter(c);
    utf8_append(out, cased ? (previous_is_cased ? to_lower(c) : to_upper(c)) : c);
    previous_is_cased = cased;
  }
  return out;
}

std::string python_capitalize(const std::string& text) {
  std::u32string code_points = utf8_decode(text);
  std::string out;
  for (size_t i = 0; i < code_points.size(); ++i) utf8_append(out, i == 0 ? to_upper(code_points[i]) : to_lower(code_points[i]));
  return out;
}

bool python_is_class(const std::string& text, const std::string& method) {
  if (text.empty()) return false;
  if (method == "isspace") {
    for (char32_t c : utf8_decode(text))
      if (!is_python_space(c)) return false;
    return true;
  }
  if (method == "isupper" || method == "islower") {
    bool has_cased = false;
    for (unsigned char c : text) {
      if (std::isalpha(c)) {
        has_cased = true;
        if (method == "isupper" ? std::islower(c) : std::isupper(c)) return false;
      }
    }
    return has_cased;
  }
  for (unsigned char c : text) {
    bool ok = method == "isdigit" ? std::isdigit(c) : method == "isalpha" ? std::isalpha(c) : std::isalnum(c);
    if (!ok) return false;
  }
  return true;
}

}  // namespace llmesh::text::jinja
