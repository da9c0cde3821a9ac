#include "text/utf8.h"

#include <gtest/gtest.h>

namespace llmesh::text::utf8 {
namespace {

TEST(Utf8, DecodesWellFormedCharacters) {
  EXPECT_EQ(decode_char("A", 0).code_point, U'A');
  const Utf8Char e_acute = decode_char("\xC3\xA9", 0);
  EXPECT_EQ(e_acute.status, Utf8Status::Valid);
  EXPECT_EQ(e_acute.code_point, 0xE9u);
  EXPECT_EQ(e_acute.num_bytes, 2u);
  const Utf8Char robot = decode_char("\xF0\x9F\xA4\x96", 0);  // U+1F916
  EXPECT_EQ(robot.code_point, 0x1F916u);
  EXPECT_EQ(robot.num_bytes, 4u);
}

TEST(Utf8, RejectsOverlongsSurrogatesAndOutOfRange) {
  EXPECT_EQ(decode_char("\xC0\xAF", 0).status, Utf8Status::Invalid);          // overlong '/'
  EXPECT_EQ(decode_char("\xE0\x80\xAF", 0).status, Utf8Status::Invalid);      // overlong
  EXPECT_EQ(decode_char("\xED\xA0\x80", 0).status, Utf8Status::Invalid);      // surrogate U+D800
  EXPECT_EQ(decode_char("\xF4\x90\x80\x80", 0).status, Utf8Status::Invalid);  // > U+10FFFF
  EXPECT_EQ(decode_char("\x80", 0).status, Utf8Status::Invalid);              // lone continuation
  EXPECT_EQ(decode_char("\xFF", 0).status, Utf8Status::Invalid);
  // The maximal subpart of "E2 82 41" is "E2 82": it stops before the 'A'.
  EXPECT_EQ(decode_char("\xE2\x82\x41", 0).num_bytes, 2u);
}

TEST(Utf8, ReportsTruncatedTail) {
  const Utf8Char c = decode_char("\xF0\x9F\xA4", 0);
  EXPECT_EQ(c.status, Utf8Status::Truncated);
  EXPECT_EQ(c.num_bytes, 3u);
  EXPECT_EQ(complete_prefix_length("ab\xF0\x9F\xA4"), 2u);
  EXPECT_EQ(complete_prefix_length("ab\xF0\x9F\xA4\x96"), 6u);
  EXPECT_EQ(complete_prefix_length("ab\x80"), 3u);  // invalid bytes never complete: not held back
  EXPECT_EQ(complete_prefix_length("\xC3"), 0u);
  EXPECT_EQ(complete_prefix_length(""), 0u);
}

TEST(Utf8, ValidityAndReplacement) {
  EXPECT_TRUE(is_valid("plain ascii"));
  EXPECT_TRUE(is_valid("日本語 🤖"));
  EXPECT_FALSE(is_valid("a\xFFz"));
  EXPECT_FALSE(is_valid("\xE6\x97"));
  // One U+FFFD per maximal subpart (Unicode's recommended practice).
  EXPECT_EQ(replace_invalid("a\xFF\xFEz"), "a\xEF\xBF\xBD\xEF\xBF\xBDz");
  EXPECT_EQ(replace_invalid("a\xE2\x82z"), "a\xEF\xBF\xBDz");
  EXPECT_EQ(replace_invalid("ok\xF0\x9F"), "ok\xEF\xBF\xBD");
  EXPECT_EQ(replace_invalid("日本"), "日本");
}

TEST(Utf8, AppendCharEncodesEachLength) {
  std::string s;
  append_char(s, U'$');
  append_char(s, 0xA2);
  append_char(s, 0x20AC);
  append_char(s, 0x10348);
  EXPECT_EQ(s, "$\xC2\xA2\xE2\x82\xAC\xF0\x90\x8D\x88");
}

TEST(Utf8, NormalizesToNfc) {
  EXPECT_EQ(normalize_nfc("cafe\xCC\x81"), "caf\xC3\xA9");  // e + U+0301 -> é
  EXPECT_EQ(normalize_nfc("A\xCC\x8A"), "\xC3\x85");         // A + ring -> Å
  EXPECT_EQ(normalize_nfc("\xE2\x84\xAB"), "\xC3\x85");      // ANGSTROM SIGN -> Å (singleton)
  EXPECT_EQ(normalize_nfc("already NFC: é"), "already NFC: é");
  EXPECT_EQ(normalize_nfc("\xEF\xAC\x81"), "\xEF\xAC\x81");  // ligature fi is NFC-stable (NFKC would change it)
  // Invalid bytes pass through; the runs around them are still normalized.
  EXPECT_EQ(normalize_nfc("e\xCC\x81\xFF" "e\xCC\x81"), "\xC3\xA9\xFF\xC3\xA9");
}

}  // namespace
}  // namespace llmesh::text::utf8
