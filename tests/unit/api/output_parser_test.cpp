#include "text/output_parser.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace llmesh {

using text::ends_inside_block;
using text::OutputDelta;
using text::OutputParser;
using text::OutputParserOptions;

namespace {

// Pushes `text` one byte at a time (the worst case for tag splitting) and merges the deltas.
OutputDelta feed_bytes(OutputParser& p, const std::string& text, std::vector<OutputDelta>* steps = nullptr) {
  OutputDelta all;
  for (char c : text) {
    OutputDelta d = p.push(std::string(1, c));
    if (steps) steps->push_back(d);
    all.append(std::move(d));
  }
  all.append(p.finish());
  return all;
}

TEST(OutputParser, PlainTextPassesThrough) {
  OutputParser p;
  OutputDelta d = feed_bytes(p, "Hello <b>world</b> a<thin");
  EXPECT_EQ(d.content, "Hello <b>world</b> a<thin");
  EXPECT_EQ(d.reasoning, "");
}

TEST(OutputParser, ThinkBlockBecomesReasoning) {
  OutputParser p;
  OutputDelta d = feed_bytes(p, "<think>\nLet me see.\n2+2=4\n</think>\n\nThe answer is 4.");
  EXPECT_EQ(d.reasoning, "Let me see.\n2+2=4");
  EXPECT_EQ(d.content, "The answer is 4.");
}

TEST(OutputParser, NoPartialTagEverLeaks) {
  OutputParser p;
  std::vector<OutputDelta> steps;
  feed_bytes(p, "<think>abc</think>xyz", &steps);
  for (const auto& s : steps) {
    EXPECT_EQ(s.content.find('<'), std::string::npos) << s.content;
    EXPECT_EQ(s.reasoning.find('<'), std::string::npos) << s.reasoning;
  }
}

TEST(OutputParser, PromptOpenedThinkStartsInReasoning) {
  OutputParserOptions o;
  o.starts_in_reasoning = true;
  OutputParser p(o);
  EXPECT_TRUE(p.in_reasoning());
  OutputDelta d = feed_bytes(p, "hmm, thinking</think>\n\nDone.");
  EXPECT_EQ(d.reasoning, "hmm, thinking");
  EXPECT_EQ(d.content, "Done.");
}

TEST(OutputParser, EmptyThinkBlockFromDisabledThinking) {
  OutputParser p;
  OutputDelta d = feed_bytes(p, "<think>\n\n</think>\n\nHi!");
  EXPECT_EQ(d.reasoning, "");
  EXPECT_EQ(d.content, "Hi!");
}

TEST(OutputParser, UnclosedReasoningAtEndStaysReasoning) {
  OutputParser p;
  OutputDelta d = feed_bytes(p, "<think>still going</thi");
  EXPECT_EQ(d.reasoning, "still going</thi");
  EXPECT_EQ(d.content, "");
}

TEST(OutputParser, ToolCallsAreParsed) {
  OutputParserOptions o;
  o.parse_tool_calls = true;
  OutputParser p(o);
  OutputDelta d = feed_bytes(p,
                             "I'll check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
                             "\"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>");
  EXPECT_EQ(d.content, "I'll check.\n");
  ASSERT_EQ(d.tool_calls.size(), 2u);
  EXPECT_EQ(d.tool_calls[0].name, "get_weather");
  EXPECT_EQ(nlohmann::json::parse(d.tool_calls[0].arguments_json), nlohmann::json({{"city", "Paris"}}));
  EXPECT_EQ(d.tool_calls[0].id.rfind("call_", 0), 0u);
  EXPECT_EQ(d.tool_calls[0].id.size(), 5u + 24u);
  EXPECT_NE(d.tool_calls[0].id, d.tool_calls[1].id);
  EXPECT_EQ(d.tool_calls[1].name, "now");
  EXPECT_EQ(d.tool_calls[1].arguments_json, "{}");
}

TEST(OutputParser, BrokenToolCallIsReturnedAsText) {
  OutputParserOptions o;
  o.parse_tool_calls = true;
  OutputParser p(o);
  const std::string text = "<tool_call>{\"name\": \"f\", \"arguments\": {oops}</tool_call> after";
  OutputDelta d = feed_bytes(p, text);
  EXPECT_TRUE(d.tool_calls.empty());
  EXPECT_EQ(d.content, text);  // exactly as generated
}

TEST(OutputParser, UnclosedToolCallAtEndIsText) {
  OutputParserOptions o;
  o.parse_tool_calls = true;
  OutputParser p(o);
  OutputDelta d = feed_bytes(p, "<tool_call>{\"name\": \"f\"");
  EXPECT_TRUE(d.tool_calls.empty());
  EXPECT_EQ(d.content, "<tool_call>{\"name\": \"f\"");
}

TEST(OutputParser, ToolCallTagsIgnoredWhenNotEnabled) {
  OutputParser p;
  OutputDelta d = feed_bytes(p, "<tool_call>{\"name\": \"f\"}</tool_call>");
  EXPECT_TRUE(d.tool_calls.empty());
  EXPECT_EQ(d.content, "<tool_call>{\"name\": \"f\"}</tool_call>");
}

TEST(OutputParser, ReasoningThenToolCall) {
  OutputParserOptions o;
  o.parse_tool_calls = true;
  OutputParser p(o);
  OutputDelta d = feed_bytes(p, "<think>need weather</think>\n\n<tool_call>{\"name\":\"w\",\"arguments\":\"{\\\"a\\\":1}\"}</tool_call>");
  EXPECT_EQ(d.reasoning, "need weather");
  EXPECT_EQ(d.content, "");
  ASSERT_EQ(d.tool_calls.size(), 1u);
  EXPECT_EQ(d.tool_calls[0].arguments_json, "{\"a\":1}");
}

TEST(OutputParser, EndsInsideBlock) {
  EXPECT_TRUE(ends_inside_block("<|im_start|>assistant\n<think>\n", "<think>", "</think>"));
  EXPECT_FALSE(ends_inside_block("<|im_start|>assistant\n<think>\n\n</think>\n\n", "<think>", "</think>"));
  EXPECT_FALSE(ends_inside_block("<|im_start|>assistant\n", "<think>", "</think>"));
  EXPECT_TRUE(ends_inside_block("<think>a</think> x <think>", "<think>", "</think>"));
}

}  // namespace
}  // namespace llmesh
