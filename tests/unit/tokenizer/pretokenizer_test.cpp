// Splits worked out by hand from the regex semantics of HF tokenizers (Oniguruma).
#include "text/pretokenizer.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "text/tokenizer_json.h"
#include "tokenizer_assets.h"

namespace llmesh {

using text::PreTokenizer;
using text::read_hf_tokenizer_json;

namespace {

std::vector<std::string> split(const std::string& name, std::string_view text) {
  const PreTokenizer pre(PreTokenizer::patterns_for(name));
  std::vector<std::string_view> views;
  pre.split(text, views);
  return {views.begin(), views.end()};
}

using Pieces = std::vector<std::string>;

TEST(PreTokenizer, WordsKeepTheirLeadingSpace) {
  EXPECT_EQ(split("llama3", "Hello world"), (Pieces{"Hello", " world"}));
  EXPECT_EQ(split("qwen2", "Hello, world!"), (Pieces{"Hello", ",", " world", "!"}));
}

TEST(PreTokenizer, ContractionsAreCaseInsensitive) {
  EXPECT_EQ(split("llama3", "I'M you're DON'T"), (Pieces{"I", "'M", " you", "'re", " DON", "'T"}));
  EXPECT_EQ(split("gpt2", "I'M"), (Pieces{"I", "'", "M"}));  // GPT-2's contractions are lower-case only
}

TEST(PreTokenizer, DigitGrouping) {
  EXPECT_EQ(split("qwen2", "12345"), (Pieces{"1", "2", "3", "4", "5"}));
  EXPECT_EQ(split("llama3", "12345"), (Pieces{"123", "45"}));
  EXPECT_EQ(split("deepseek-v3", "1234567"), (Pieces{"123", "456", "7"}));
  EXPECT_EQ(split("gpt2", "a 12345"), (Pieces{"a", " 12345"}));
}

TEST(PreTokenizer, WhitespaceRuns) {
  // "\s*[\r\n]+" takes the spaces and newlines; "\s+(?!\S)" leaves one space for the word.
  EXPECT_EQ(split("llama3", "  \n\n  a"), (Pieces{"  \n\n", " ", " a"}));
  EXPECT_EQ(split("llama3", "a   b"), (Pieces{"a", "  ", " b"}));
  EXPECT_EQ(split("llama3", "end   "), (Pieces{"end", "   "}));
  EXPECT_EQ(split("llama3", "x\r\n\r\ny"), (Pieces{"x", "\r\n\r\n", "y"}));
}

TEST(PreTokenizer, DeepSeekSplitsDigitsAndCjkFirst) {
  EXPECT_EQ(split("deepseek-v3", "abc123def"), (Pieces{"abc", "123", "def"}));
  EXPECT_EQ(split("deepseek-v3", "中文ab"), (Pieces{"中文", "ab"}));
  EXPECT_EQ(split("deepseek-v3", "x.Foo"), (Pieces{"x", ".Foo"}));
}

TEST(PreTokenizer, NelIsWhitespaceAsInOniguruma) {
  // With U+0085 as \s: "\s+(?!\S)" takes the first NEL, the second prefixes the word.
  EXPECT_EQ(split("llama3", "a\u0085\u0085b"), (Pieces{"a", "\u0085", "\u0085b"}));
}

TEST(PreTokenizer, InvalidUtf8BytesBecomeTheirOwnPieces) {
  EXPECT_EQ(split("llama3", "ab\xFF" "cd"), (Pieces{"ab", "\xFF", "cd"}));
  const Pieces pieces = split("qwen2", "x \xC3 y\xE2\x82");
  std::string joined;
  for (const auto& p : pieces) joined += p;
  EXPECT_EQ(joined, "x \xC3 y\xE2\x82");
}

TEST(PreTokenizer, PiecesAlwaysConcatenateToTheText) {
  for (const char* name : {"qwen2", "llama3", "deepseek-v3", "gpt2"}) {
    const std::string text = "Mixed 文本 with 123456 numbers,\t tabs\n\n and 🤖 emoji   ";
    std::string joined;
    for (const auto& p : split(name, text)) joined += p;
    EXPECT_EQ(joined, text) << name;
  }
}

TEST(PreTokenizer, UnknownNameAndBadRegexAreErrors) {
  EXPECT_THROW(PreTokenizer::patterns_for("bloom"), Error);
  EXPECT_THROW(PreTokenizer(std::vector<std::string>{"(unclosed"}), Error);
}

TEST(PreTokenizer, KnownNamesMatchTheTokenizerJsonPatterns) {
  const std::pair<const char*, const char*> expected[] = {
      {"qwen3", "qwen2"}, {"llama3_1", "llama3"}, {"deepseek_v3", "deepseek-v3"}};
  for (const auto& [asset, name] : expected) {
    if (!test::has_asset(asset)) GTEST_SKIP() << "missing " << test::asset_tokenizer_json(asset);
    EXPECT_EQ(read_hf_tokenizer_json(test::asset_tokenizer_json(asset)).pre_tokenizer, name) << asset;
  }
}

}  // namespace
}  // namespace llmesh
