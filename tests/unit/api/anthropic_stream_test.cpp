// The Anthropic content-block state machine: event order, block indexes,
// signatures, stop reasons, usage, and the non-streaming fold.
#include <gtest/gtest.h>

#include "api/anthropic_stream.h"

namespace llmesh::api {

using engine::FinishReason;
using text::OutputDelta;

namespace {

using nlohmann::json;

OutputDelta reasoning(std::string text) {
  OutputDelta d;
  d.reasoning = std::move(text);
  return d;
}

OutputDelta content(std::string text) {
  OutputDelta d;
  d.content = std::move(text);
  return d;
}

OutputDelta tool_call(std::string name, std::string arguments_json) {
  OutputDelta d;
  d.tool_calls.push_back({"call_abc123", std::move(name), std::move(arguments_json)});
  return d;
}

// Checks the order rules the SDK relies on; returns the problem or "".
std::string check_event_order(const std::vector<json>& events) {
  if (events.empty() || events.front()["type"] != "message_start") return "first event is not message_start";
  if (events.back()["type"] != "message_stop") return "last event is not message_stop";
  int open_index = -1, last_index = -1;
  std::string open_type;
  bool saw_signature = false, saw_message_delta = false;
  for (size_t i = 1; i + 1 < events.size(); ++i) {
    const json& e = events[i];
    const std::string type = e["type"];
    if (saw_message_delta) return "event after message_delta: " + type;
    if (type == "content_block_start") {
      if (open_index >= 0) return "block opened while another is open";
      if (e["index"].get<int>() != last_index + 1) return "index not consecutive: " + e.dump();
      open_index = e["index"];
      open_type = e["content_block"]["type"];
      saw_signature = false;
    } else if (type == "content_block_delta") {
      if (e["index"] != open_index) return "delta for a block that is not open: " + e.dump();
      const std::string delta_type = e["delta"]["type"];
      const std::string expected = open_type == "thinking" ? "thinking_delta"
                                   : open_type == "text"   ? "text_delta"
                                                           : "input_json_delta";
      if (saw_signature) return "delta after signature_delta";
      if (delta_type == "signature_delta") {
        if (open_type != "thinking") return "signature on a non-thinking block";
        saw_signature = true;
      } else if (delta_type != expected) {
        return "wrong delta type " + delta_type + " in a " + open_type + " block";
      }
    } else if (type == "content_block_stop") {
      if (e["index"] != open_index) return "stop for a block that is not open";
      if (open_type == "thinking" && !saw_signature) return "thinking block closed without signature_delta";
      last_index = open_index;
      open_index = -1;
    } else if (type == "message_delta") {
      if (open_index >= 0) return "message_delta while a block is open";
      if (!e.contains("usage") || !e["usage"].contains("output_tokens")) return "message_delta without usage";
      saw_message_delta = true;
    } else {
      return "unexpected event " + type;
    }
  }
  return saw_message_delta ? "" : "no message_delta";
}

std::vector<json> run(const std::vector<OutputDelta>& deltas, FinishReason reason, const std::string& stop = "") {
  AnthropicEventWriter writer("msg_1", "claude-test");
  std::vector<json> events{writer.message_start(AnthropicUsage::from_counts(100, 0, 0))};
  for (const auto& d : deltas) {
    for (auto& e : writer.push(d)) events.push_back(std::move(e));
  }
  for (auto& e : writer.finish(reason, stop, AnthropicUsage::from_counts(100, 64, 7))) events.push_back(std::move(e));
  return events;
}

TEST(AnthropicStream, ThinkingTextAndToolUseBlocksInOrder) {
  const auto events = run({reasoning("Let me "), reasoning("think."), content("\n\n"), content("Running it."),
                           tool_call("Bash", R"({"command":"ls","timeout":5})")},
                          FinishReason::Eos);
  EXPECT_EQ(check_event_order(events), "");
  const auto message = fold_message_events(events);
  ASSERT_EQ(message["content"].size(), 3u) << message.dump();
  EXPECT_EQ(message["content"][0]["type"], "thinking");
  EXPECT_EQ(message["content"][0]["thinking"], "Let me think.");
  EXPECT_EQ(message["content"][0]["signature"], thinking_signature("Let me think."));
  EXPECT_EQ(message["content"][1]["type"], "text");
  EXPECT_EQ(message["content"][1]["text"], "\n\nRunning it.");
  EXPECT_EQ(message["content"][2]["type"], "tool_use");
  EXPECT_EQ(message["content"][2]["id"], "toolu_abc123");
  EXPECT_EQ(message["content"][2]["name"], "Bash");
  EXPECT_EQ(message["content"][2]["input"].dump(), R"({"command":"ls","timeout":5})");
  EXPECT_EQ(message["stop_reason"], "tool_use");
  EXPECT_TRUE(message["stop_sequence"].is_null());
  EXPECT_EQ(message["id"], "msg_1");
  EXPECT_EQ(message["model"], "claude-test");
  EXPECT_EQ(message["role"], "assistant");
}

TEST(AnthropicStream, WhitespaceBetweenBlocksOpensNoTextBlock) {
  const auto events =
      run({reasoning("r"), content("\n"), tool_call("A", "{}"), content(" \n"), tool_call("B", "{\"x\":[1]}")},
          FinishReason::Eos);
  EXPECT_EQ(check_event_order(events), "");
  const auto message = fold_message_events(events);
  ASSERT_EQ(message["content"].size(), 3u) << message.dump();
  EXPECT_EQ(message["content"][1]["name"], "A");
  EXPECT_EQ(message["content"][1]["input"], nlohmann::ordered_json::object());
  EXPECT_EQ(message["content"][2]["input"]["x"][0], 1);
}

TEST(AnthropicStream, TextAfterToolUseOpensANewBlock) {
  const auto events = run({content("a"), tool_call("A", "{}"), content("b")}, FinishReason::Length);
  EXPECT_EQ(check_event_order(events), "");
  const auto message = fold_message_events(events);
  ASSERT_EQ(message["content"].size(), 3u);
  EXPECT_EQ(message["content"][2]["text"], "b");
  EXPECT_EQ(message["stop_reason"], "max_tokens");  // ran out of tokens even though it called a tool
}

TEST(AnthropicStream, ArgumentsThatAreNotAnObjectBecomeText) {
  const auto events = run({tool_call("A", "not json")}, FinishReason::Eos);
  EXPECT_EQ(check_event_order(events), "");
  const auto message = fold_message_events(events);
  ASSERT_EQ(message["content"].size(), 1u);
  EXPECT_EQ(message["content"][0]["type"], "text");
  EXPECT_NE(message["content"][0]["text"].get<std::string>().find("not json"), std::string::npos);
  EXPECT_EQ(message["stop_reason"], "end_turn");
}

TEST(AnthropicStream, StopReasons) {
  EXPECT_EQ(anthropic_stop_reason(FinishReason::Eos, false), "end_turn");
  EXPECT_EQ(anthropic_stop_reason(FinishReason::Eos, true), "tool_use");
  EXPECT_EQ(anthropic_stop_reason(FinishReason::Length, false), "max_tokens");
  EXPECT_EQ(anthropic_stop_reason(FinishReason::StopSequence, false), "stop_sequence");
  const auto message = fold_message_events(run({content("x")}, FinishReason::StopSequence, "END"));
  EXPECT_EQ(message["stop_reason"], "stop_sequence");
  EXPECT_EQ(message["stop_sequence"], "END");
}

TEST(AnthropicStream, EmptyOutputIsOneEmptyTextBlock) {
  const auto events = run({}, FinishReason::StopSequence, "e");
  EXPECT_EQ(check_event_order(events), "");
  const auto blocks = fold_message_events(events)["content"];
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0]["type"], "text");
  EXPECT_EQ(blocks[0]["text"], "");
  // Whitespace alone is still text when nothing else came.
  const auto blank = fold_message_events(run({content("\n")}, FinishReason::Eos))["content"];
  ASSERT_EQ(blank.size(), 1u);
  EXPECT_EQ(blank[0]["text"], "\n");
}

TEST(AnthropicStream, UsageAddsUpToThePrompt) {
  const auto usage = AnthropicUsage::from_counts(1000, 960, 12);
  EXPECT_EQ(usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens, 1000);
  EXPECT_EQ(usage.cache_read_input_tokens, 960);
  EXPECT_EQ(usage.output_tokens, 12);
  const json j = usage.to_json();
  for (const char* key : {"input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  // message_delta's usage replaces message_start's (the prefix-cache split is known only then).
  const auto message = fold_message_events(run({content("x")}, FinishReason::Eos));
  EXPECT_EQ(message["usage"]["input_tokens"], 36);
  EXPECT_EQ(message["usage"]["cache_read_input_tokens"], 64);
  EXPECT_EQ(message["usage"]["output_tokens"], 7);
}

TEST(AnthropicStream, MessageStartShape) {
  AnthropicEventWriter writer("msg_x", "m");
  const json start = writer.message_start(AnthropicUsage::from_counts(5, 0, 0));
  EXPECT_EQ(start["message"]["content"], json::array());
  EXPECT_TRUE(start["message"]["stop_reason"].is_null());
  EXPECT_EQ(start["message"]["usage"]["input_tokens"], 5);
  EXPECT_EQ(start["message"]["type"], "message");
}

TEST(AnthropicStream, SignatureIsStableAndContentDependent) {
  EXPECT_EQ(thinking_signature("abc"), thinking_signature("abc"));
  EXPECT_NE(thinking_signature("abc"), thinking_signature("abd"));
  EXPECT_EQ(tool_use_id("call_XYZ"), "toolu_XYZ");
}

}  // namespace
}  // namespace llmesh::api
