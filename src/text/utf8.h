// UTF-8 helpers shared by the tokenizer and the streaming detokenizer.
//
// Invalid input is never an error here: callers decide whether to keep the raw
// bytes (the tokenizer does, so encode->decode is lossless) or to replace each
// maximal invalid subpart with U+FFFD (what a client-facing text stream needs,
// following the Unicode "substitution of maximal subparts" practice).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace llmesh::text::utf8 {

inline constexpr char32_t kReplacementChar = 0xFFFD;

enum class Utf8Status {
  Valid,      // a complete, well-formed character
  Invalid,    // bytes that can never start a well-formed character (num_bytes = maximal subpart)
  Truncated,  // a well-formed prefix that the end of the input cut off
};

struct Utf8Char {
  Utf8Status status = Utf8Status::Valid;
  char32_t code_point = 0;  // meaningful only when status == Valid
  size_t num_bytes = 0;     // >= 1 whenever the input at `pos` is non-empty
};

// Decodes the character starting at text[pos] (pos < text.size()).
Utf8Char decode_char(std::string_view text, size_t pos);

// Appends the UTF-8 encoding of `code_point` (must be a Unicode scalar value).
void append_char(std::string& out, char32_t code_point);

bool is_valid(std::string_view text);

// Length of the longest prefix that ends on a character boundary, treating a
// truncated character at the very end as not yet complete. Invalid bytes count
// as complete (they will never become valid by appending more bytes).
size_t complete_prefix_length(std::string_view text);

// Copies `text`, replacing each maximal invalid subpart (and a truncated tail)
// with U+FFFD.
std::string replace_invalid(std::string_view text);

// Unicode Normalization Form C. Runs of invalid bytes are copied unchanged and
// the valid runs between them are normalized separately. ASCII-only text is
// returned as is without calling into ICU.
std::string normalize_nfc(std::string_view text);

}  // namespace llmesh::text::utf8
