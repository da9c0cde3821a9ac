#include "text/byte_level.h"

#include <array>

#include "text/utf8.h"

namespace llmesh::text::byte_level {

namespace {

bool is_printable_latin1(int byte) {
  return (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) || (byte >= 0xAE && byte <= 0xFF);
}

struct Tables {
  std::array<char32_t, 256> code_point_of_byte{};
  std::array<int16_t, 512> byte_of_code_point{};  // every mapped code point is < 0x144
  std::array<std::string, 256> utf8_of_byte{};

  Tables() {
    byte_of_code_point.fill(-1);
    int next_extra = 0;
    for (int byte = 0; byte < 256; ++byte) {
      const char32_t code_point = is_printable_latin1(byte) ? byte : 256 + next_extra++;
      code_point_of_byte[byte] = code_point;
      byte_of_code_point[code_point] = static_cast<int16_t>(byte);
      utf8::append_char(utf8_of_byte[byte], code_point);
    }
  }
};

const Tables& tables() {
  static const Tables instance;
  return instance;
}

}  // namespace

char32_t byte_to_code_point(uint8_t byte) { return tables().code_point_of_byte[byte]; }

int code_point_to_byte(char32_t code_point) {
  if (code_point >= tables().byte_of_code_point.size()) return -1;
  return tables().byte_of_code_point[code_point];
}

std::string encode(std::string_view bytes) {
  const Tables& t = tables();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += t.utf8_of_byte[static_cast<uint8_t>(c)];
  return out;
}

std::optional<std::string> decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const utf8::Utf8Char c = utf8::decode_char(text, pos);
    if (c.status != utf8::Utf8Status::Valid) return std::nullopt;
    const int byte = code_point_to_byte(c.code_point);
    if (byte < 0) return std::nullopt;
    out += static_cast<char>(byte);
    pos += c.num_bytes;
  }
  return out;
}

}  // namespace llmesh::text::byte_level
