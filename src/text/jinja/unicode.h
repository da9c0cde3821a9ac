// UTF-8 helpers: Python strings index, slice and measure by code point, so the
// interpreter converts to code points where those operations need it.
#pragma once

#include <string>
#include <vector>

namespace llmesh::text::jinja {

// Code points of a UTF-8 string (invalid bytes are kept one per code point).
std::u32string utf8_decode(const std::string& text);
std::string utf8_encode(const std::u32string& code_points);
void utf8_append(std::string& out, char32_t code_point);
// Number of code points (Python len()).
size_t utf8_length(const std::string& text);

// Simple case mapping for Latin-1, Latin Extended-A, Greek and Cyrillic
// (what str.upper()/lower() do for the scripts chat messages mostly use;
// other code points are returned unchanged).
char32_t to_upper(char32_t code_point);
char32_t to_lower(char32_t code_point);
bool is_cased_letter(char32_t code_point);
std::string utf8_upper(const std::string& text);
std::string utf8_lower(const std::string& text);

// Python str.isspace() for one code point (ASCII and common Unicode spaces).
bool is_python_space(char32_t code_point);

}  // namespace llmesh::text::jinja
