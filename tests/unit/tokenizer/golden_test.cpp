// Every golden string must encode to exactly the reference ids (made by the JS
// reference tokenizer, see tools/gen_tokenizer_goldens.mjs), decode back to the
// (normalized) text, and stream back in valid UTF-8 pieces.
#include <chrono>
#include <string>

#include "text/streaming_decoder.h"
#include "text/utf8.h"
#include "tokenizer_assets.h"

namespace llmesh {

using text::StreamingDecoder;
using text::Tokenizer;

namespace {

std::string ids_to_string(const std::vector<int32_t>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s + "]";
}

class GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTest, EncodeMatchesReference) {
  const std::string name = GetParam();
  LLMESH_REQUIRE_TOKENIZER_ASSET(name);
  const Tokenizer& tokenizer = test::asset_tokenizer(name);
  const auto cases = test::read_goldens(name);
  ASSERT_GE(cases.size(), 1000u) << "golden file for " << name << " is missing or short";
  size_t num_failed = 0;
  for (const auto& c : cases) {
    const std::vector<int32_t> ids = tokenizer.encode(c.text);
    if (ids != c.ids) {
      ++num_failed;
      ADD_FAILURE() << name << ": text " << nlohmann::json(c.text).dump() << "\n  expected " << ids_to_string(c.ids)
                    << "\n  got      " << ids_to_string(ids);
      if (num_failed > 20) break;
    }
  }
  EXPECT_EQ(num_failed, 0u);
}

TEST_P(GoldenTest, DecodeAndStreamRoundTrip) {
  const std::string name = GetParam();
  LLMESH_REQUIRE_TOKENIZER_ASSET(name);
  const Tokenizer& tokenizer = test::asset_tokenizer(name);
  for (const auto& c : test::read_goldens(name)) {
    const std::string expected = tokenizer.normalizes_nfc() ? text::utf8::normalize_nfc(c.text) : c.text;
    const std::string decoded = tokenizer.decode(c.ids);
    ASSERT_EQ(decoded, expected) << name << ": " << nlohmann::json(c.text).dump();

    StreamingDecoder stream(tokenizer);
    std::string streamed;
    for (int32_t id : c.ids) {
      const std::string piece = stream.push(id);
      ASSERT_TRUE(text::utf8::is_valid(piece)) << name << ": invalid UTF-8 piece for " << nlohmann::json(c.text).dump();
      streamed += piece;
    }
    streamed += stream.flush();
    ASSERT_EQ(streamed, decoded) << name << ": " << nlohmann::json(c.text).dump();
  }
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, GoldenTest,
                         ::testing::Values("qwen3", "llama3_1", "deepseek_v3", "mistral_nemo", "gptoss"));

}  // namespace
}  // namespace llmesh
