// Output item shapes and the encrypted_content codec of /v1/responses.
#include <gtest/gtest.h>

#include "api/responses_items.h"

namespace llmesh::api {
namespace {

using nlohmann::json;

TEST(ResponsesItems, ReasoningContentRoundTripsAnyBytes) {
  std::string all_bytes;
  for (int b = 0; b < 256; ++b) all_bytes += char(b);
  for (const std::string& text : {std::string(""), std::string("a"), std::string("ab"), std::string("abc"),
                                  std::string("think\n\nmore"), all_bytes}) {
    const std::string encoded = encode_reasoning_content(text);
    EXPECT_EQ(encoded.find('\n'), std::string::npos);
    EXPECT_EQ(decode_reasoning_content(encoded), text);
  }
}

TEST(ResponsesItems, EncodingIsTaggedStandardBase64) {
  // RFC 4648 section 10 test vectors, behind our tag.
  const std::string tag = encode_reasoning_content("");
  EXPECT_EQ(encode_reasoning_content("f"), tag + "Zg==");
  EXPECT_EQ(encode_reasoning_content("fo"), tag + "Zm8=");
  EXPECT_EQ(encode_reasoning_content("foo"), tag + "Zm9v");
  EXPECT_EQ(encode_reasoning_content("foobar"), tag + "Zm9vYmFy");
}

TEST(ResponsesItems, ForeignOrBrokenContentIsNotOurs) {
  EXPECT_FALSE(decode_reasoning_content("gAAAAABoFakeOpenAIBlob==").has_value());
  const std::string tag = encode_reasoning_content("");
  EXPECT_FALSE(decode_reasoning_content(tag + "Zm9").has_value());  // length not a multiple of 4
  EXPECT_FALSE(decode_reasoning_content(tag + "Zm9v!!!!").has_value());
  EXPECT_FALSE(decode_reasoning_content(tag + "Zg==Zm9v").has_value());  // data after padding
}

TEST(ResponsesItems, Shapes) {
  const json message = message_item_json("msg_1", "hi", "completed", false);
  EXPECT_EQ(message, json::parse(R"({"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
      "content": [{"type": "output_text", "text": "hi", "annotations": [], "logprobs": []}]})"));
  EXPECT_TRUE(message_item_json("msg_1", "", "in_progress", true)["content"].empty());
  EXPECT_EQ(function_call_item_json("fc_1", "call_1", "f", "{}", "completed"),
            json::parse(R"({"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_1",
                "name": "f", "arguments": "{}"})"));
  EXPECT_EQ(reasoning_item_json("rs_1", "t", false, std::nullopt),
            json::parse(R"({"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "t"}]})"));
  EXPECT_EQ(reasoning_item_json("rs_1", "", true, std::string("x"))["encrypted_content"], "x");
  const std::string a = make_item_id("msg_"), b = make_item_id("msg_");
  EXPECT_NE(a, b);
  EXPECT_EQ(a.size(), 4u + 32u);
}

}  // namespace
}  // namespace llmesh::api
