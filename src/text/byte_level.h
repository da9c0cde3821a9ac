// GPT-2's byte-level alphabet: every byte 0..255 is written as one printable
// Unicode character so that vocabulary files can store arbitrary bytes as
// text. Printable Latin-1 bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for
// themselves; the other 68 bytes map, in byte order, to U+0100, U+0101, ...
// (so the space 0x20 is 'Ġ' U+0120 and the newline 0x0A is 'Ċ' U+010A).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace llmesh::text::byte_level {

// The code point that stands for `byte`.
char32_t byte_to_code_point(uint8_t byte);

// The byte a code point stands for, or -1 when it is not in the alphabet.
int code_point_to_byte(char32_t code_point);

// Raw bytes -> byte-level text (UTF-8 of the mapped code points).
std::string encode(std::string_view bytes);

// Byte-level text -> raw bytes; nullopt when a character is outside the alphabet
// or the text is not valid UTF-8 (e.g. an added token like "<｜User｜>").
std::optional<std::string> decode(std::string_view text);

}  // namespace llmesh::text::byte_level
