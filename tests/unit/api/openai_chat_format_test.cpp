// Event order and shapes of streamed and non-streamed chat responses.
#include "api/openai_chat.h"

#include <gtest/gtest.h>

#include "api/openai_format.h"
#include "api/sse.h"
#include "text/tokenizer_json.h"

namespace llmesh::api {

using engine::FinishReason;
using text::read_hf_tokenizer_json;
using text::Tokenizer;

namespace {

using nlohmann::json;

// A tiny byte-level vocabulary is enough: these tests only need token_bytes().
const Tokenizer& tiny_tokenizer() {
  static std::unique_ptr<Tokenizer> tokenizer = [] {
    const std::string path = std::string(LLMESH_SOURCE_DIR) + "/assets/npm/tokenizer-qwen3/models/tokenizer.json";
    return std::make_unique<Tokenizer>(read_hf_tokenizer_json(path));
  }();
  return *tokenizer;
}

PipelineOutput output(std::string reasoning, std::string content, FinishReason finish = FinishReason::None) {
  PipelineOutput o;
  o.delta.reasoning = std::move(reasoning);
  o.delta.content = std::move(content);
  o.finish_reason = finish;
  return o;
}

TEST(ChatChunks, RoleFirstThenDeltasThenFinish) {
  ChatChunkFormatter f("chatcmpl-1", 123, "tiny", tiny_tokenizer());
  json first = f.role_chunk();
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
  EXPECT_TRUE(first["choices"][0]["finish_reason"].is_null());

  auto chunks = f.chunks(output("why", "what"), false);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0]["choices"][0]["delta"]["reasoning_content"], "why");
  EXPECT_EQ(chunks[1]["choices"][0]["delta"]["content"], "what");

  auto last = f.chunks(output("", "!", FinishReason::Length), false);
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(last[1]["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(last[1]["choices"][0]["delta"], json::object());

  json usage = f.usage_chunk(usage_json(10, 5, 4));
  EXPECT_EQ(usage["choices"], json::array());
  EXPECT_EQ(usage["usage"]["total_tokens"], 15);
  EXPECT_EQ(usage["usage"]["prompt_tokens_details"]["cached_tokens"], 4);
}

TEST(ChatChunks, ToolCallsGetIndexesAndToolCallsFinish) {
  ChatChunkFormatter f("id", 1, "tiny", tiny_tokenizer());
  PipelineOutput o;
  o.delta.tool_calls = {{"call_a", "f", "{}"}, {"call_b", "g", "{\"x\":1}"}};
  auto chunks = f.chunks(o, true);
  ASSERT_EQ(chunks.size(), 1u);
  json calls = chunks[0]["choices"][0]["delta"]["tool_calls"];
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0]["index"], 0);
  EXPECT_EQ(calls[1]["index"], 1);
  EXPECT_EQ(calls[1]["function"]["arguments"], "{\"x\":1}");
  auto end = f.chunks(output("", "", FinishReason::Eos), true);
  EXPECT_EQ(end.back()["choices"][0]["finish_reason"], "tool_calls");
}

TEST(ChatResponse, AccumulatesMessage) {
  ChatResponseBuilder b(tiny_tokenizer());
  b.add(output("think ", ""));
  b.add(output("more", "Hello"));
  PipelineOutput with_lp = output("", " you");
  with_lp.logprobs.push_back({9707, -0.5f, {{9707, -0.5f}, {1, -2.0f}}});
  b.add(with_lp);
  json r = b.build("id", 5, "tiny", FinishReason::StopSequence, usage_json(3, 2, 0), true);
  EXPECT_EQ(r["object"], "chat.completion");
  const json& choice = r["choices"][0];
  EXPECT_EQ(choice["message"]["content"], "Hello you");
  EXPECT_EQ(choice["message"]["reasoning_content"], "think more");
  EXPECT_EQ(choice["finish_reason"], "stop");
  ASSERT_EQ(choice["logprobs"]["content"].size(), 1u);
  EXPECT_EQ(choice["logprobs"]["content"][0]["token"], tiny_tokenizer().token_bytes(9707));
  EXPECT_EQ(choice["logprobs"]["content"][0]["top_logprobs"].size(), 2u);
  EXPECT_FALSE(choice["message"].contains("tool_calls"));
}

TEST(ChatResponse, ToolCallsMakeContentNull) {
  ChatResponseBuilder b(tiny_tokenizer());
  PipelineOutput o = output("", "\n");
  o.delta.tool_calls = {{"call_a", "f", "{}"}};
  b.add(o);
  json r = b.build("id", 5, "tiny", FinishReason::Eos, usage_json(3, 2, 0), false);
  EXPECT_TRUE(r["choices"][0]["message"]["content"].is_null());
  EXPECT_EQ(r["choices"][0]["message"]["tool_calls"][0]["id"], "call_a");
  EXPECT_EQ(r["choices"][0]["message"]["tool_calls"][0]["type"], "function");
  EXPECT_EQ(r["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_TRUE(r["choices"][0]["logprobs"].is_null());
}

TEST(Sse, Framing) {
  EXPECT_EQ(sse_data(json{{"a", 1}}), "data: {\"a\":1}\n\n");
  EXPECT_EQ(sse_done(), "data: [DONE]\n\n");
  // Invalid UTF-8 (a token cutting a character) must not throw.
  EXPECT_NO_THROW(sse_data(json{{"t", std::string("\xF0\x9F")}}));
}

}  // namespace
}  // namespace llmesh::api
