// The token -> text path with the real Qwen3 tokenizer (from assets/, made by
// scripts/fetch_assets.sh): stop strings across token boundaries, reasoning
// split, finish handling and counts.
#include "api/token_text_pipeline.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "api/api_error.h"
#include "text/tokenizer_json.h"

#include "qwen3_tokenizer.h"

namespace llmesh::api {

using engine::FinishReason;
using engine::TokenEvent;
using text::OutputDelta;
using text::read_hf_tokenizer_json;
using text::Tokenizer;

namespace {

struct Collected {
  OutputDelta delta;
  FinishReason finish = FinishReason::None;
  int num_outputs = 0;
};

// Streams `ids` as TokenEvents, the last one carrying `last_reason`.
Collected run(TokenTextPipeline& p, const std::vector<int32_t>& ids, FinishReason last_reason) {
  Collected c;
  for (size_t i = 0; i < ids.size() && !p.finished(); ++i) {
    TokenEvent ev;
    ev.token_id = ids[i];
    if (i == 0) {
      ev.num_prompt_tokens = 10;
      ev.num_cached_tokens = 4;
    }
    if (i + 1 == ids.size()) ev.finish_reason = last_reason;
    PipelineOutput out = p.push(ev);
    c.delta.append(std::move(out.delta));
    if (out.finish_reason != FinishReason::None) c.finish = out.finish_reason;
    ++c.num_outputs;
  }
  return c;
}

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tok_ = qwen3_tokenizer();
    if (!tok_) GTEST_SKIP() << "assets/npm/tokenizer-qwen3 missing (run scripts/fetch_assets.sh)";
  }
  const Tokenizer* tok_ = nullptr;
};

TEST_F(PipelineTest, PlainTextRoundTripsAndCounts) {
  PipelineOptions o;
  o.parser.parse_reasoning = false;
  TokenTextPipeline p(*tok_, o);
  const std::string text = "Hello, world! Ünïcødé 🚀 done.";
  auto ids = tok_->encode(text);
  Collected c = run(p, ids, FinishReason::Length);
  EXPECT_EQ(c.delta.content, text);
  EXPECT_EQ(c.finish, FinishReason::Length);
  EXPECT_EQ(p.num_generated_tokens(), int64_t(ids.size()));
  EXPECT_EQ(p.num_prompt_tokens(), 10);
  EXPECT_EQ(p.num_cached_tokens(), 4);
}

TEST_F(PipelineTest, EosTokenIsNotText) {
  TokenTextPipeline p(*tok_, {});
  auto ids = tok_->encode("Hi there");
  ids.push_back(*tok_->token_id("<|im_end|>"));
  Collected c = run(p, ids, FinishReason::Eos);
  EXPECT_EQ(c.delta.content, "Hi there");
  EXPECT_EQ(c.finish, FinishReason::Eos);
  EXPECT_EQ(p.num_generated_tokens(), int64_t(ids.size()));  // EOS counts as a generated token
}

TEST_F(PipelineTest, StopStringSpanningTokensIsCutAndNeverLeaks) {
  // Find a stop string that the tokenizer splits over at least two tokens.
  const std::string text = "The quick brown fox jumps over the lazy dog";
  const std::string stop = "own fox ju";
  auto ids = tok_->encode(text);
  ASSERT_GT(ids.size(), 4u);
  PipelineOptions o;
  o.stop_strings = {stop};
  TokenTextPipeline p(*tok_, o);
  std::string seen;
  for (size_t i = 0; i < ids.size() && !p.finished(); ++i) {
    TokenEvent ev;
    ev.token_id = ids[i];
    PipelineOutput out = p.push(ev);
    seen += out.delta.content;
    EXPECT_EQ(seen.find("own"), std::string::npos) << "leaked: " << seen;
  }
  EXPECT_TRUE(p.finished());
  EXPECT_TRUE(p.stopped_by_string());
  EXPECT_EQ(p.finish_reason(), FinishReason::StopSequence);
  EXPECT_EQ(seen, "The quick br");
  EXPECT_LT(p.num_generated_tokens(), int64_t(ids.size()));  // stopped early
}

TEST_F(PipelineTest, ReasoningAndContentSplit) {
  TokenTextPipeline p(*tok_, {});
  auto ids = tok_->encode("<think>\nponder\n</think>\n\nAnswer.");
  Collected c = run(p, ids, FinishReason::Length);
  EXPECT_EQ(c.delta.reasoning, "ponder");
  EXPECT_EQ(c.delta.content, "Answer.");
}

TEST_F(PipelineTest, ToolCallAndFinish) {
  PipelineOptions o;
  o.parser.parse_tool_calls = true;
  TokenTextPipeline p(*tok_, o);
  auto ids = tok_->encode("<tool_call>\n{\"name\": \"lookup\", \"arguments\": {\"q\": \"x\"}}\n</tool_call>");
  ids.push_back(*tok_->token_id("<|im_end|>"));
  Collected c = run(p, ids, FinishReason::Eos);
  ASSERT_EQ(c.delta.tool_calls.size(), 1u);
  EXPECT_EQ(c.delta.tool_calls[0].name, "lookup");
  EXPECT_TRUE(p.emitted_tool_calls());
  EXPECT_EQ(c.delta.content, "");
}

TEST_F(PipelineTest, EngineErrorBecomesApiError) {
  TokenTextPipeline p(*tok_, {});
  TokenEvent ev;
  ev.error = "boom";
  try {
    p.push(ev);
    FAIL() << "no throw";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.http_status(), 500);
  }
}

TEST_F(PipelineTest, AbortFlushesHeldText) {
  PipelineOptions o;
  o.stop_strings = {"XYZ"};
  TokenTextPipeline p(*tok_, o);
  TokenEvent ev;
  ev.token_id = tok_->encode("X")[0];
  EXPECT_EQ(p.push(ev).delta.content, "");  // held: may start "XYZ"
  PipelineOutput out = p.abort();
  EXPECT_EQ(out.delta.content, "X");
  EXPECT_EQ(out.finish_reason, FinishReason::Aborted);
}

}  // namespace
}  // namespace llmesh::api
