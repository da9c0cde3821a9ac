// BPE and added-token behaviour on a hand-made vocabulary, plus the properties
// every real tokenizer must have (lossless on arbitrary bytes, special-token handling).
#include "text/tokenizer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>
#include <random>

#include "core/error.h"
#include "text/utf8.h"
#include "tokenizer_assets.h"
#include "toy_vocab.h"

namespace llmesh {

using text::BpeVocab;
using text::read_hf_tokenizer_json;
using text::Tokenizer;

namespace {

using Ids = std::vector<int32_t>;

const Tokenizer& toy() {
  static const Tokenizer tokenizer(test::make_toy_vocab());
  return tokenizer;
}

TEST(Tokenizer, MergesLowestRankFirst) {
  // "b c" (rank 0) beats "a b" (rank 1); then (a, bc) has no rule.
  EXPECT_EQ(toy().encode("abc"), (Ids{'a', test::kToyBc}));
  EXPECT_EQ(toy().encode("ab"), (Ids{test::kToyAb}));
  EXPECT_EQ(toy().encode("abd"), (Ids{test::kToyAb, 'd'}));
}

TEST(Tokenizer, TiesGoToTheLeftmostPair) {
  EXPECT_EQ(toy().encode("aaa"), (Ids{test::kToyAa, 'a'}));
  EXPECT_EQ(toy().encode("aaaaa"), (Ids{test::kToyAa, test::kToyAa, 'a'}));
  // In " aa", "a a" (rank 3) beats "Ġ a" (rank 4); with one 'a' only "Ġ a" applies.
  EXPECT_EQ(toy().encode(" aa"), (Ids{' ', test::kToyAa}));
  EXPECT_EQ(toy().encode(" a"), (Ids{test::kToySpaceA}));
}

// Naive BPE straight from the definition, on byte-level strings.
std::vector<std::string> reference_bpe(const std::string& word, const BpeVocab& vocab) {
  std::map<std::pair<std::string, std::string>, size_t> rank;
  for (size_t i = 0; i < vocab.merges.size(); ++i) rank.emplace(vocab.merges[i], i);
  std::vector<std::string> symbols;
  for (char c : word) symbols.push_back(text::byte_level::encode(std::string(1, c)));
  for (;;) {
    size_t best = SIZE_MAX, best_rank = SIZE_MAX;
    for (size_t i = 0; i + 1 < symbols.size(); ++i) {
      const auto it = rank.find({symbols[i], symbols[i + 1]});
      if (it != rank.end() && it->second < best_rank) best_rank = it->second, best = i;
    }
    if (best == SIZE_MAX) return symbols;
    symbols[best] += symbols[best + 1];
    symbols.erase(symbols.begin() + best + 1);
  }
}

TEST(Tokenizer, LongWordsMergeLikeShortOnes) {
  // Words longer than 128 bytes take the heap path; both must follow the definition.
  const BpeVocab vocab = test::make_toy_vocab();
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t length = 1 + rng() % 400;
    std::string word;
    for (size_t i = 0; i < length; ++i) word += "abc"[rng() % 3];
    Ids expected;
    for (const std::string& symbol : reference_bpe(word, vocab)) expected.push_back(*toy().token_id(symbol));
    ASSERT_EQ(toy().encode(word), expected) << word;
  }
}

TEST(Tokenizer, AddedTokensUseLeftmostLongestMatch) {
  EXPECT_EQ(toy().encode("<|x|>"), (Ids{test::kToySpecialX}));
  EXPECT_EQ(toy().encode("<|x|>y"), (Ids{test::kToyXy}));
  EXPECT_EQ(toy().encode("ab<|x|>ab"), (Ids{test::kToyAb, test::kToySpecialX, test::kToyAb}));
  EXPECT_EQ(toy().encode("<<think>"), (Ids{'<', test::kToyThink}));
}

TEST(Tokenizer, ParseSpecialFalseTreatsOnlySpecialTokensAsText) {
  const Ids ids = toy().encode("<|x|>", /*parse_special=*/false);
  for (int32_t id : ids) EXPECT_FALSE(toy().is_special(id));
  EXPECT_EQ(toy().decode(ids), "<|x|>");
  EXPECT_EQ(toy().encode("<think>", false), (Ids{test::kToyThink}));  // not special: still matched
  EXPECT_EQ(toy().encode("<|x|>y", false), (Ids{test::kToyXy}));      // the non-special longer token
}

TEST(Tokenizer, DecodeSkipsSpecialTokensOnRequest) {
  const Ids ids = toy().encode("ab<|x|><think>ab");
  EXPECT_EQ(toy().decode(ids), "ab<|x|><think>ab");
  EXPECT_EQ(toy().decode(ids, /*skip_special=*/true), "ab<think>ab");
  EXPECT_EQ(toy().decode(Ids{-1, 99999, 'a'}), "a");  // ids outside the vocabulary add nothing
}

TEST(Tokenizer, TokenQueries) {
  EXPECT_EQ(toy().vocab_size(), 264);
  EXPECT_EQ(toy().token_string(' '), "Ġ");
  EXPECT_EQ(toy().token_bytes(' '), " ");
  EXPECT_EQ(toy().token_string(test::kToySpaceA), "Ġa");
  EXPECT_EQ(toy().token_bytes(test::kToySpaceA), " a");
  EXPECT_EQ(toy().token_id("Ġa"), test::kToySpaceA);
  EXPECT_EQ(toy().token_id("<think>"), test::kToyThink);
  EXPECT_FALSE(toy().token_id("nope").has_value());
  EXPECT_TRUE(toy().is_special(test::kToySpecialX));
  EXPECT_FALSE(toy().is_special(test::kToyThink));
  EXPECT_TRUE(toy().is_added(test::kToyThink));
  EXPECT_EQ(toy().bos_token_id(), test::kToySpecialX);
  EXPECT_THROW(toy().token_bytes(264), Error);
}

TEST(Tokenizer, InconsistentVocabulariesAreErrors) {
  BpeVocab bad_added = test::make_toy_vocab();
  bad_added.added_tokens.push_back({5000, "<|far|>", true});
  EXPECT_THROW(Tokenizer{bad_added}, Error);

  BpeVocab bad_bos = test::make_toy_vocab();
  bad_bos.bos_token_id = 264;
  EXPECT_THROW(Tokenizer{bad_bos}, Error);

  BpeVocab missing_byte = test::make_toy_vocab();
  missing_byte.tokens[0x41] = "";  // no token for 'A'
  EXPECT_THROW(Tokenizer{missing_byte}, Error);

  BpeVocab no_pre = test::make_toy_vocab();
  no_pre.pre_tokenizer = "";
  EXPECT_THROW(Tokenizer{no_pre}, Error);
}

TEST(Tokenizer, InvalidUtf8RoundTripsExactly) {
  const std::string cases[] = {"\xFF", "a\x80z", "\xC3", "caf\xC3", "\xE2\x82", "x\xF0\x9F\xA4 y",
                               "\xED\xA0\x80 surrogate", "\xC0\xAF overlong", std::string("nul\0byte", 8)};
  for (const std::string& text : cases) EXPECT_EQ(toy().decode(toy().encode(text)), text);
  for (const char* name : {"qwen3", "llama3_1", "deepseek_v3", "mistral_nemo"}) {
    if (!test::has_asset(name)) continue;
    const Tokenizer& tokenizer = test::asset_tokenizer(name);
    for (const std::string& text : cases) {
      EXPECT_EQ(tokenizer.decode(tokenizer.encode(text)), text) << name;
    }
  }
}

TEST(Tokenizer, RandomBytesRoundTrip) {
  std::mt19937 rng(42);
  for (const char* name : {"qwen3", "llama3_1", "deepseek_v3", "mistral_nemo"}) {
    if (!test::has_asset(name)) continue;
    const Tokenizer& tokenizer = test::asset_tokenizer(name);
    for (int trial = 0; trial < 300; ++trial) {
      std::string text(rng() % 40, '\0');
      for (char& c : text) c = static_cast<char>(rng() % 256);
      const std::string expected = tokenizer.normalizes_nfc() ? text::utf8::normalize_nfc(text) : text;
      ASSERT_EQ(tokenizer.decode(tokenizer.encode(text)), expected) << name << " trial " << trial;
    }
  }
}

TEST(Tokenizer, RealSpecialTokens) {
  if (test::has_asset("qwen3")) {
    const Tokenizer& qwen = test::asset_tokenizer("qwen3");
    const int32_t im_start = *qwen.token_id("<|im_start|>");
    EXPECT_EQ(im_start, 151644);
    EXPECT_TRUE(qwen.is_special(im_start));
    EXPECT_FALSE(qwen.is_special(*qwen.token_id("<think>")));
    EXPECT_EQ(qwen.encode("<|im_start|>user"), (Ids{151644, 872}));
    const Ids plain = qwen.encode("<|im_start|>user", /*parse_special=*/false);
    EXPECT_GT(plain.size(), 2u);
    for (int32_t id : plain) EXPECT_FALSE(qwen.is_added(id));
    EXPECT_EQ(qwen.decode(plain), "<|im_start|>user");
    EXPECT_EQ(qwen.encode("<think>", false), (Ids{151667}));  // <think> is not special: always matched
    EXPECT_EQ(qwen.decode(Ids{151644, 872, 151645}, /*skip_special=*/true), "user");
  }
  if (test::has_asset("llama3_1")) {
    const Tokenizer& llama = test::asset_tokenizer("llama3_1");
    EXPECT_EQ(llama.encode("<|begin_of_text|>Hello world"), (Ids{128000, 9906, 1917}));
    EXPECT_EQ(llama.bos_token_id(), 128000);
    EXPECT_TRUE(llama.add_bos_token());
  }
}

TEST(Tokenizer, ConcurrentEncodesAgree) {
  LLMESH_REQUIRE_TOKENIZER_ASSET("qwen3");
  const Tokenizer& tokenizer = test::asset_tokenizer("qwen3");
  const auto cases = test::read_goldens("qwen3");
  std::vector<std::thread> threads;
  std::atomic<int> num_mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = t; i < cases.size(); i += 2) {
        if (tokenizer.encode(cases[i].text) != cases[i].ids) ++num_mismatches;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(num_mismatches.load(), 0);
}

TEST(Tokenizer, NameAndRegexSourcesBehaveIdentically) {
  // A GGUF vocabulary names its pre-tokenizer instead of listing regexes; the result must not differ.
  for (const char* name : {"qwen3", "llama3_1", "deepseek_v3"}) {
    if (!test::has_asset(name)) continue;
    BpeVocab vocab = read_hf_tokenizer_json(test::asset_tokenizer_json(name));
    ASSERT_FALSE(vocab.pre_tokenizer.empty()) << name;
    vocab.pre_tokenizer_regexes.clear();
    vocab.normalize_nfc = false;  // GGUF stores no normalizer: the name "qwen2" must imply NFC
    vocab.ignore_merges = false;  // nor ignore_merges: the name "llama3" must imply it
    const Tokenizer by_name(std::move(vocab));
    const Tokenizer& by_regex = test::asset_tokenizer(name);
    for (const auto& c : test::read_goldens(name)) ASSERT_EQ(by_name.encode(c.text), by_regex.encode(c.text)) << name;
  }
}

}  // namespace
}  // namespace llmesh
