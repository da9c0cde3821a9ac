#include "text/byte_level.h"

#include <gtest/gtest.h>

#include <set>

namespace llmesh::text::byte_level {
namespace {

TEST(ByteLevel, KnownGpt2Mappings) {
  EXPECT_EQ(byte_to_code_point(' '), 0x120u);   // 'Ġ'
  EXPECT_EQ(byte_to_code_point('\n'), 0x10Au);  // 'Ċ'
  EXPECT_EQ(byte_to_code_point('\t'), 0x109u);  // 'ĉ'
  EXPECT_EQ(byte_to_code_point(0x00), 0x100u);  // 'Ā'
  EXPECT_EQ(byte_to_code_point(0x7F), 0x121u);  // 'ġ'
  EXPECT_EQ(byte_to_code_point(0xAD), 0x143u);  // 'Ń' (soft hyphen is not printable)
  EXPECT_EQ(byte_to_code_point('a'), static_cast<char32_t>('a'));
  EXPECT_EQ(byte_to_code_point(0xE9), 0xE9u);   // 'é' stands for itself
  EXPECT_EQ(encode(" hello\n"), "\xC4\xA0hello\xC4\x8A");
}

TEST(ByteLevel, IsABijectionOnAllBytes) {
  std::set<char32_t> seen;
  std::string all_bytes;
  for (int b = 0; b < 256; ++b) {
    const char32_t cp = byte_to_code_point(static_cast<uint8_t>(b));
    EXPECT_TRUE(seen.insert(cp).second) << "code point used twice: " << static_cast<uint32_t>(cp);
    EXPECT_EQ(code_point_to_byte(cp), b);
    all_bytes += static_cast<char>(b);
  }
  EXPECT_EQ(decode(encode(all_bytes)), all_bytes);
}

TEST(ByteLevel, DecodeRejectsCharactersOutsideTheAlphabet) {
  EXPECT_FALSE(decode("<｜User｜>").has_value());  // U+FF5C is not a byte-level character
  EXPECT_FALSE(decode("\xFF").has_value());         // not UTF-8
  EXPECT_EQ(code_point_to_byte(0x4E00), -1);
  EXPECT_EQ(decode("<|im_start|>"), "<|im_start|>");
}

}  // namespace
}  // namespace llmesh::text::byte_level
