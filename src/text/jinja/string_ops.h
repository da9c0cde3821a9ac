// Python str operations on UTF-8 strings, shared by methods and filters.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmesh::text::jinja {

// str.strip/lstrip/rstrip: `chars` unset strips Unicode whitespace.
std::string python_strip(const std::string& text, const std::optional<std::string>& chars, bool left, bool right);
// str.split(sep, maxsplit) / rsplit; max_split < 0 means no limit.
std::vector<std::string> python_split(const std::string& text, const std::string& separator, int64_t max_split,
                                      bool from_right);
// str.split() / rsplit() without a separator: runs of whitespace, no empty parts.
std::vector<std::string> python_split_whitespace(const std::string& text, int64_t max_split, bool from_right);
std::vector<std::string> python_splitlines(const std::string& text);
std::string python_replace(const std::string& text, const std::string& old_text, const std::string& new_text,
                           int64_t count);
int64_t python_count(const std::string& text, const std::string& needle);
// str.upper()/lower() (Latin, Greek and Cyrillic case pairs; see unicode.h).
std::string unicode_upper(std::string text);
std::string unicode_lower(std::string text);
std::string python_title(const std::string& text);       // str.title()
std::string python_capitalize(const std::string& text);  // str.capitalize()
// str.isdigit/isalpha/isalnum/isspace/isupper/islower (ASCII classes; isspace Unicode).
bool python_is_class(const std::string& text, const std::string& method);

}  // namespace llmesh::text::jinja
