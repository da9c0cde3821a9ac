#include "text/tokenizer_json.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "core/error.h"
#include "text/byte_level.h"
#include "text/tokenizer.h"
#include "tokenizer_assets.h"

namespace llmesh {

using text::BpeVocab;
using text::read_hf_tokenizer_json;
using text::Tokenizer;

namespace {

class TokenizerJsonFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("llmesh_tokenizer_json_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& content) {
    const auto path = dir_ / name;
    std::ofstream(path) << content;
    return path.string();
  }

  // A tiny valid byte-level tokenizer.json with a replaceable part.
  static std::string tiny_json(const std::string& normalizer = "null",
                               const std::string& pre_tokenizer = R"({"type": "ByteLevel", "add_prefix_space": false, "use_regex": true})",
                               const std::string& model_type = "BPE", const std::string& merges = R"([["a", "b"]])") {
    std::string vocab = "{";
    for (int b = 0; b < 256; ++b) {
      const std::string token = nlohmann::json(byte_level_token(b)).dump();
      vocab += token + ": " + std::to_string(b) + ",";
    }
    vocab += R"("ab": 256})";
    return R"({"version": "1.0", "normalizer": )" + normalizer + R"(, "pre_tokenizer": )" + pre_tokenizer +
           R"(, "decoder": {"type": "ByteLevel"}, "post_processor": null, "added_tokens": [{"id": 257, "content": "<|end|>", "special": true}], "model": {"type": ")" +
           model_type + R"(", "vocab": )" + vocab + R"(, "merges": )" + merges + "}}";
  }
  static std::string byte_level_token(int b);

  std::filesystem::path dir_;
};

std::string TokenizerJsonFile::byte_level_token(int b) {
  return text::byte_level::encode(std::string(1, static_cast<char>(b)));
}

TEST_F(TokenizerJsonFile, ReadsAMinimalFile) {
  const BpeVocab vocab = read_hf_tokenizer_json(write("tokenizer.json", tiny_json()));
  EXPECT_EQ(vocab.tokens.size(), 258u);
  EXPECT_EQ(vocab.tokens[256], "ab");
  EXPECT_EQ(vocab.tokens[257], "<|end|>");
  ASSERT_EQ(vocab.merges.size(), 1u);
  EXPECT_EQ(vocab.merges[0], (std::pair<std::string, std::string>{"a", "b"}));
  EXPECT_EQ(vocab.pre_tokenizer, "gpt2");
  EXPECT_FALSE(vocab.normalize_nfc);
  ASSERT_EQ(vocab.added_tokens.size(), 1u);
  EXPECT_TRUE(vocab.added_tokens[0].special);
  const Tokenizer tokenizer(vocab);
  EXPECT_EQ(tokenizer.encode("ab<|end|>"), (std::vector<int32_t>{256, 257}));
}

TEST_F(TokenizerJsonFile, MergesAsStringsAndNfc) {
  const BpeVocab vocab =
      read_hf_tokenizer_json(write("tokenizer.json", tiny_json(R"({"type": "NFC"})", R"({"type": "ByteLevel", "add_prefix_space": false, "use_regex": true})", "BPE", R"(["a b"])")));
  EXPECT_EQ(vocab.merges[0], (std::pair<std::string, std::string>{"a", "b"}));
  EXPECT_TRUE(vocab.normalize_nfc);
}

TEST_F(TokenizerJsonFile, ErrorsNameTheFileAndTheProblem) {
  const auto expect_error = [](const std::string& path, const std::string& needle) {
    try {
      read_hf_tokenizer_json(path);
      ADD_FAILURE() << "no error for " << path;
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(path), std::string::npos) << message;
      EXPECT_NE(message.find(needle), std::string::npos) << message;
    }
  };
  expect_error((dir_ / "absent.json").string(), "cannot open");
  expect_error(write("bad.json", "{not json"), "not valid JSON");
  expect_error(write("wordpiece.json", tiny_json("null", R"({"type": "ByteLevel"})", "WordPiece")), "WordPiece");
  expect_error(write("nfkc.json", tiny_json(R"({"type": "NFKC"})")), "NFKC");
  expect_error(write("metaspace.json", tiny_json("null", R"({"type": "Metaspace"})")), "ByteLevel");
  expect_error(write("types.json", R"({"model": {"type": "BPE", "vocab": {"a": "zero"}, "merges": []}})"),
               "not a valid id");
  std::string wrong_type = tiny_json();
  wrong_type.replace(wrong_type.find(R"("special": true)"), 15, R"("special": "yes")");
  expect_error(write("wrong_type.json", wrong_type), "structure");
  expect_error(write("prefix.json", tiny_json("null", R"({"type": "ByteLevel", "add_prefix_space": true})")),
               "add_prefix_space");
}

TEST(TokenizerJsonAssets, SpecialTokenFacts) {
  if (test::has_asset("qwen3")) {
    const BpeVocab qwen = read_hf_tokenizer_json(test::asset_tokenizer_json("qwen3"));
    EXPECT_TRUE(qwen.normalize_nfc);
    EXPECT_FALSE(qwen.add_bos_token);
    EXPECT_EQ(qwen.eos_token_id, 151645);  // <|im_end|>
    EXPECT_EQ(qwen.tokens.size(), 151669u);
  }
  if (test::has_asset("llama3_1")) {
    const BpeVocab llama = read_hf_tokenizer_json(test::asset_tokenizer_json("llama3_1"));
    EXPECT_TRUE(llama.ignore_merges);
    EXPECT_TRUE(llama.add_bos_token);
    EXPECT_EQ(llama.bos_token_id, 128000);
    EXPECT_EQ(llama.eos_token_id, 128009);  // <|eot_id|>
    EXPECT_EQ(llama.tokens.size(), 128256u);
  }
  if (test::has_asset("mistral_nemo")) {
    const BpeVocab nemo = read_hf_tokenizer_json(test::asset_tokenizer_json("mistral_nemo"));
    EXPECT_EQ(nemo.pre_tokenizer, "tekken");  // the regex GGUF files name "tekken" is exactly this file's
    ASSERT_EQ(nemo.pre_tokenizer_regexes.size(), 1u);
    EXPECT_TRUE(nemo.add_bos_token);
    EXPECT_EQ(nemo.bos_token_id, 1);  // <s>
    EXPECT_EQ(nemo.eos_token_id, 2);  // </s>
  }
  if (test::has_asset("deepseek_v3")) {
    const BpeVocab deepseek = read_hf_tokenizer_json(test::asset_tokenizer_json("deepseek_v3"));
    EXPECT_TRUE(deepseek.add_bos_token);  // from tokenizer_config.json
    EXPECT_EQ(deepseek.bos_token_id, 0);
    EXPECT_EQ(deepseek.eos_token_id, 1);
  }
}

TEST(TokenizerJsonAssets, RejectsSentencePieceStyleBpeClearly) {
  // Gemma 3's BPE works on U+2581-joined text with byte fallback, not byte-level BPE.
  LLMESH_REQUIRE_TOKENIZER_ASSET("gemma3");
  try {
    read_hf_tokenizer_json(test::asset_tokenizer_json("gemma3"));
    FAIL() << "gemma3's tokenizer.json was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("byte_fallback"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace llmesh
