// Exact prompt lengths under real tokenizers (the npm tokenizer assets).
#include "bench/prompt_builder.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace llmesh::bench {
namespace {

std::string tokenizer_path(const std::string& family) {
  return std::string(LLMESH_SOURCE_DIR) + "/assets/npm/tokenizer-" + family + "/models/tokenizer.json";
}

class PromptBuilderTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PromptBuilderTest, TextsHaveExactlyTheAskedTokenCount) {
  const std::string path = tokenizer_path(GetParam());
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " missing (scripts/fetch_assets.sh)";
  PromptBuilder builder(load_tokenizer(path));
  EXPECT_GE(builder.num_pool_words(), 1000u);
  for (int64_t n : {1, 2, 17, 100, 1000, 5000}) {
    const std::string text = builder.text_of_tokens(n, 42 + static_cast<uint64_t>(n));
    EXPECT_EQ(static_cast<int64_t>(builder.tokenizer().encode(text).size()), n) << GetParam() << " n=" << n;
  }
}

TEST_P(PromptBuilderTest, DifferentSeedsShareNoPrefixSameSeedRepeats) {
  const std::string path = tokenizer_path(GetParam());
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " missing";
  PromptBuilder builder(load_tokenizer(path));
  const auto a = builder.tokenizer().encode(builder.text_of_tokens(64, 1));
  const auto b = builder.tokenizer().encode(builder.text_of_tokens(64, 2));
  const auto a2 = builder.tokenizer().encode(builder.text_of_tokens(64, 1));
  EXPECT_EQ(a, a2);
  // With thousands of pool words the first two tokens of two seeds colliding is ~1e-6.
  EXPECT_FALSE(a[0] == b[0] && a[1] == b[1]);
}

TEST_P(PromptBuilderTest, CorpusWindowsAreExactToo) {
  const std::string path = tokenizer_path(GetParam());
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " missing";
  std::string corpus;
  for (int i = 0; i < 200; ++i)
    corpus += "Paragraph " + std::to_string(i) + ": the quick brown fox, naïve café — jumps over 3.14 lazy dogs!\n";
  PromptBuilder builder(load_tokenizer(path), corpus);
  for (int64_t n : {5, 50, 700, 4000}) {
    const std::string text = builder.text_of_tokens(n, static_cast<uint64_t>(n) * 977);
    EXPECT_EQ(static_cast<int64_t>(builder.tokenizer().encode(text).size()), n) << GetParam() << " n=" << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Families, PromptBuilderTest, ::testing::Values("qwen3", "llama3_1", "deepseek_v3"));

}  // namespace
}  // namespace llmesh::bench
