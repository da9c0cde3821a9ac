#include "text/streaming_decoder.h"

#include <gtest/gtest.h>

#include "text/utf8.h"
#include "tokenizer_assets.h"
#include "toy_vocab.h"

namespace llmesh {

using text::StreamingDecoder;
using text::Tokenizer;

namespace {

const Tokenizer& toy() {
  static const Tokenizer tokenizer(test::make_toy_vocab());
  return tokenizer;
}

// In the toy vocabulary, id b is the single byte b.
std::vector<std::string> push_bytes(StreamingDecoder& stream, std::string_view bytes) {
  std::vector<std::string> pieces;
  for (char c : bytes) pieces.push_back(stream.push(static_cast<uint8_t>(c)));
  return pieces;
}

const std::string kReplacement = "\xEF\xBF\xBD";

TEST(StreamingDecoder, HoldsBackPartialCharacters) {
  StreamingDecoder stream(toy());
  EXPECT_EQ(push_bytes(stream, "a\xF0\x9F\xA4\x96" "b"),
            (std::vector<std::string>{"a", "", "", "", "\xF0\x9F\xA4\x96", "b"}));
  EXPECT_EQ(stream.num_pending_bytes(), 0u);
  EXPECT_EQ(stream.flush(), "");
}

TEST(StreamingDecoder, ReplacesInvalidBytesAsSoonAsTheyAreCertain) {
  StreamingDecoder stream(toy());
  EXPECT_EQ(stream.push(0x80), kReplacement);  // a lone continuation byte can never become valid
  EXPECT_EQ(stream.push(0xE2), "");
  EXPECT_EQ(stream.push('a'), kReplacement + "a");  // E2 followed by 'a' is a dead end
  EXPECT_EQ(stream.push(0xE2), "");
  EXPECT_EQ(stream.push(0x82), "");
  EXPECT_EQ(stream.flush(), kReplacement);  // the stream ended inside a character
  EXPECT_EQ(stream.flush(), "");
}

TEST(StreamingDecoder, SkipsSpecialTokensOnRequest) {
  StreamingDecoder keep(toy());
  EXPECT_EQ(keep.push(test::kToySpecialX), "<|x|>");
  StreamingDecoder skip(toy(), /*skip_special=*/true);
  EXPECT_EQ(skip.push(test::kToySpecialX), "");
  EXPECT_EQ(skip.push(test::kToyThink), "<think>");  // not special: kept
  EXPECT_EQ(skip.push(-5), "");
}

TEST(StreamingDecoder, MultiTokenCharactersOnARealTokenizer) {
  LLMESH_REQUIRE_TOKENIZER_ASSET("llama3_1");
  const Tokenizer& tokenizer = test::asset_tokenizer("llama3_1");
  const std::string text = "家族: 👩‍👩‍👧‍👦 and 🇯🇵, 𠀀 done";
  const std::vector<int32_t> ids = tokenizer.encode(text);
  StreamingDecoder stream(tokenizer);
  std::string joined;
  size_t num_held_back = 0;
  for (int32_t id : ids) {
    const std::string piece = stream.push(id);
    ASSERT_TRUE(text::utf8::is_valid(piece));
    if (!text::utf8::is_valid(tokenizer.token_bytes(id))) ++num_held_back;
    joined += piece;
  }
  joined += stream.flush();
  EXPECT_EQ(joined, text);
  EXPECT_GT(num_held_back, 0u) << "the text should contain tokens that cut characters";
}

}  // namespace
}  // namespace llmesh
