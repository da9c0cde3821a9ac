// OutputParser on each tool-call format (Hermes, DeepSeek-V3/V3.1, Llama 3
// JSON), and the streaming property: however the text is split into pushes,
// the merged deltas equal those of one push of the whole text.
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "text/output_parser.h"

#include "output_split.h"

namespace llmesh {

using text::OutputDelta;
using text::OutputParser;
using text::OutputParserOptions;
using text::ParsedToolCall;
using text::ToolCallFormat;

namespace {

using test::expect_same;
using test::random_split;

OutputParserOptions tool_options(ToolCallFormat format) {
  OutputParserOptions options;
  options.parse_tool_calls = true;
  options.tool_call_format = format;
  return options;
}

// Feeds `pieces` in order and merges every delta, finish() included.
OutputDelta feed(const OutputParserOptions& options, const std::vector<std::string>& pieces,
                 std::vector<OutputDelta>* steps = nullptr) {
  OutputParser parser(options);
  OutputDelta all;
  for (const std::string& piece : pieces) {
    OutputDelta d = parser.push(piece);
    if (steps) steps->push_back(d);
    all.append(std::move(d));
  }
  OutputDelta last = parser.finish();
  if (steps) steps->push_back(last);
  all.append(std::move(last));
  return all;
}

std::vector<std::string> bytes_of(const std::string& text) {
  std::vector<std::string> pieces;
  for (char c : text) pieces.emplace_back(1, c);
  return pieces;
}

OutputDelta feed_bytes(const OutputParserOptions& options, const std::string& text,
                       std::vector<OutputDelta>* steps = nullptr) {
  return feed(options, bytes_of(text), steps);
}

nlohmann::json args_of(const ParsedToolCall& call) { return nlohmann::json::parse(call.arguments_json); }

// ---- DeepSeek-V3 ---------------------------------------------------------------

const std::string kDsCallsBegin = "<｜tool▁calls▁begin｜>";
const std::string kDsCallsEnd = "<｜tool▁calls▁end｜>";
const std::string kDsCallBegin = "<｜tool▁call▁begin｜>";
const std::string kDsCallEnd = "<｜tool▁call▁end｜>";
const std::string kDsSep = "<｜tool▁sep｜>";

std::string ds_v3_call(const std::string& name, const std::string& args) {
  return kDsCallBegin + "function" + kDsSep + name + "\n```json\n" + args + "\n```" + kDsCallEnd;
}

TEST(OutputParserDeepSeek, ParsesV3Calls) {
  const std::string text = "Let me look.\n" + kDsCallsBegin + ds_v3_call("get_weather", R"({"city": "Paris"})") + "\n" +
                           ds_v3_call("now", "{}") + kDsCallsEnd;
  std::vector<OutputDelta> steps;
  OutputDelta d = feed_bytes(tool_options(ToolCallFormat::DeepSeekV3), text, &steps);
  EXPECT_EQ(d.content, "Let me look.\n");
  ASSERT_EQ(d.tool_calls.size(), 2u);
  EXPECT_EQ(d.tool_calls[0].name, "get_weather");
  EXPECT_EQ(args_of(d.tool_calls[0]), nlohmann::json({{"city", "Paris"}}));
  EXPECT_EQ(d.tool_calls[1].name, "now");
  EXPECT_EQ(args_of(d.tool_calls[1]), nlohmann::json::object());
  EXPECT_NE(d.tool_calls[0].id, d.tool_calls[1].id);
  // No piece of a marker ever reaches the content.
  for (const OutputDelta& step : steps) EXPECT_EQ(step.content.find('<'), std::string::npos) << step.content;
}

TEST(OutputParserDeepSeek, ParsesV31Calls) {
  const std::string text = kDsCallsBegin + kDsCallBegin + "get_weather" + kDsSep + R"({"city": "Rome"})" + kDsCallEnd +
                           kDsCallBegin + "get_time" + kDsSep + "{}" + kDsCallEnd + kDsCallsEnd;
  OutputDelta d = feed_bytes(tool_options(ToolCallFormat::DeepSeekV3), text);
  EXPECT_EQ(d.content, "");
  ASSERT_EQ(d.tool_calls.size(), 2u);
  EXPECT_EQ(d.tool_calls[0].name, "get_weather");
  EXPECT_EQ(args_of(d.tool_calls[0]), nlohmann::json({{"city", "Rome"}}));
  EXPECT_EQ(d.tool_calls[1].name, "get_time");
}

TEST(OutputParserDeepSeek, CallWithoutSectionMarker) {
  OutputDelta d = feed_bytes(tool_options(ToolCallFormat::DeepSeekV3), ds_v3_call("f", R"({"a": [1, 2]})"));
  ASSERT_EQ(d.tool_calls.size(), 1u);
  EXPECT_EQ(args_of(d.tool_calls[0]), nlohmann::json({{"a", {1, 2}}}));
}

TEST(OutputParserDeepSeek, BrokenCallIsText) {
  const std::string broken = kDsCallBegin + "function" + kDsSep + "f\n```json\n{oops\n```" + kDsCallEnd;
  OutputDelta d = feed_bytes(tool_options(ToolCallFormat::DeepSeekV3), kDsCallsBegin + broken + kDsCallsEnd);
  EXPECT_TRUE(d.tool_calls.empty());
  EXPECT_EQ(d.content, broken);  // the call as generated; the section markers are dropped
}

TEST(OutputParserDeepSeek, UnclosedCallIsText) {
  const std::string cut = kDsCallBegin + "function" + kDsSep + "f\n```json\n{\"a\":";
  OutputDelta d = feed_bytes(tool_options(ToolCallFormat::DeepSeekV3), "ok " + kDsCallsBegin + cut);
  EXPECT_TRUE(d.tool_calls.empty());
  EXPECT_EQ(d.content, "ok " + cut);
}

TEST(OutputParserDeepSeek, HermesTagsAreTextForDeepSeek) {
  const std::string text = "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
  OutputDelta d = feed_bytes(tool_options(ToolCallFormat::DeepSeekV3), text);
  EXPECT_TRUE(d.tool_calls.empty());
  EXPECT_EQ(d.content, text);
}

TEST(OutputParserDeepSeek, PartialMarkerAtEndIsText) {
  const std::string partial = kDsCallBegin.substr(0, 7);  // "<｜tool" cut inside a multi-byte character
  OutputDelta d = feed_bytes(tool_options(ToolCallFormat::DeepSeekV3), "a " + partial);
  EXPECT_EQ(d.content, "a " + partial);
}

// ---- Llama 3 JSON -------------------------------------------------------------------

TEST(OutputParserLlama, WholeMessageJsonCall) {
  OutputDelta d = feed_bytes(tool_options(ToolCallFormat::Llama3Json),
                             "\n {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}");
  EXPECT_EQ(d.content, "");
  ASSERT_EQ(d.tool_calls.size(), 1u);
  EXPECT_EQ(d.tool_calls[0].name, "get_weather");
  EXPECT_EQ(args_of(d.tool_calls[0]), nlohmann::json({{"city", "Oslo"}}));
}

TEST(OutputParserLlama, PythonTagPrefixAndSeveralCalls) {
  OutputDelta d = feed_bytes(tool_options(ToolCallFormat::Llama3Json),
                             "<|python_tag|>{\"name\": \"a\", \"parameters\": {\"s\": \"}{\\\"\"}}; "
                             "{\"name\": \"b\", \"arguments\": {}}\n");
  EXPECT_EQ(d.content, "");
  ASSERT_EQ(d.tool_calls.size(), 2u);
  EXPECT_EQ(d.tool_calls[0].name, "a");
  EXPECT_EQ(args_of(d.tool_calls[0]), nlohmann::json({{"s", "}{\""}}));
  EXPECT_EQ(d.tool_calls[1].name, "b");
}

TEST(OutputParserLlama, TextFirstMeansPlainContent) {
  const std::string text = "Sure: {\"name\": \"a\", \"parameters\": {}}";
  OutputDelta d = feed_bytes(tool_options(ToolCallFormat::Llama3Json), text);
  EXPECT_TRUE(d.tool_calls.empty());
  EXPECT_EQ(d.content, text);
}

TEST(OutputParserLlama, OrdinaryJsonIsContent) {
  const std::string text = "{\"name\": \"Ada\", \"born\": 1815} and more";
  OutputDelta d = feed_bytes(tool_options(ToolCallFormat::Llama3Json), text);
  EXPECT_TRUE(d.tool_calls.empty());
  EXPECT_EQ(d.content, text);
}

TEST(OutputParserLlama, CutOffCallIsContent) {
  const std::string text = "{\"name\": \"a\", \"parameters\": {\"x\": ";
  OutputDelta d = feed_bytes(tool_options(ToolCallFormat::Llama3Json), text);
  EXPECT_TRUE(d.tool_calls.empty());
  EXPECT_EQ(d.content, text);
}

TEST(OutputParserLlama, TextAfterCallsIsContent) {
  OutputDelta d =
      feed_bytes(tool_options(ToolCallFormat::Llama3Json), "{\"name\": \"a\", \"parameters\": {}}\n\nDone.");
  ASSERT_EQ(d.tool_calls.size(), 1u);
  EXPECT_EQ(d.content, "Done.");
}

TEST(OutputParserLlama, NoToolsMeansNoParsing) {
  OutputParserOptions options;  // parse_tool_calls = false
  options.tool_call_format = ToolCallFormat::Llama3Json;
  const std::string text = "{\"name\": \"a\", \"parameters\": {}}";
  OutputDelta d = feed_bytes(options, text);
  EXPECT_TRUE(d.tool_calls.empty());
  EXPECT_EQ(d.content, text);
}

TEST(OutputParserLlama, ReasoningThenCall) {
  OutputDelta d = feed_bytes(tool_options(ToolCallFormat::Llama3Json),
                             "<think>\nweather needed\n</think>\n\n{\"name\": \"w\", \"parameters\": {\"c\": 1}}");
  EXPECT_EQ(d.reasoning, "weather needed");
  EXPECT_EQ(d.content, "");
  ASSERT_EQ(d.tool_calls.size(), 1u);
}

TEST(OutputParserLlama, BlankOutputStaysBlank) {
  OutputDelta d = feed_bytes(tool_options(ToolCallFormat::Llama3Json), "  ");
  EXPECT_EQ(d.content, "  ");
}

// ---- Hermes and None --------------------------------------------------------------

TEST(OutputParserHermes, SeveralCallsAroundText) {
  const std::string text =
      "A<tool_call>\n{\"name\": \"x\", \"arguments\": {\"k\": 1}}\n</tool_call>"
      "B<tool_call>{\"name\": \"y\"}</tool_call>";
  OutputDelta d = feed_bytes(tool_options(ToolCallFormat::Hermes), text);
  EXPECT_EQ(d.content, "AB");
  ASSERT_EQ(d.tool_calls.size(), 2u);
  EXPECT_EQ(d.tool_calls[0].name, "x");
  EXPECT_EQ(d.tool_calls[1].name, "y");
  EXPECT_EQ(d.tool_calls[1].arguments_json, "{}");
}

TEST(OutputParserHermes, FormatNoneParsesNoCalls) {
  const std::string text = "<tool_call>{\"name\": \"x\", \"arguments\": {}}</tool_call>";
  OutputDelta d = feed_bytes(tool_options(ToolCallFormat::None), text);
  EXPECT_TRUE(d.tool_calls.empty());
  EXPECT_EQ(d.content, text);
}

// ---- Mistral ----------------------------------------------------------------------

const std::string kToolCalls = "[TOOL_CALLS]";

TEST(OutputParserMistral, ParsesTheV3ArrayKeepingNineCharacterIds) {
  const std::string text = "Checking. " + kToolCalls +
                           R"([{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1B2c3D4e"}, )"
                           R"({"name": "now", "arguments": {}, "id": "not-nine-chars"}])";
  const OutputDelta out = feed_bytes(tool_options(ToolCallFormat::Mistral), text);
  EXPECT_EQ(out.content, "Checking. ");
  ASSERT_EQ(out.tool_calls.size(), 2u);
  EXPECT_EQ(out.tool_calls[0].name, "get_weather");
  EXPECT_EQ(args_of(out.tool_calls[0]), nlohmann::json({{"city", "Paris"}}));
  EXPECT_EQ(out.tool_calls[0].id, "a1B2c3D4e");  // the model's own id goes back to it
  EXPECT_EQ(out.tool_calls[1].name, "now");
  EXPECT_TRUE(text::is_mistral_call_id(out.tool_calls[1].id)) << out.tool_calls[1].id;
}

TEST(OutputParserMistral, ParsesV11CallsEachAfterItsMarker) {
  const std::string text = kToolCalls + R"(get_weather[ARGS]{"city": "Zürich"})" + kToolCalls +
                           R"(run[CALL_ID]Zz9Yy8Xx7[ARGS]{"cmd": "ls [a-z]*"})";
  const OutputDelta out = feed_bytes(tool_options(ToolCallFormat::Mistral), text);
  EXPECT_EQ(out.content, "");
  ASSERT_EQ(out.tool_calls.size(), 2u);
  EXPECT_EQ(out.tool_calls[0].name, "get_weather");
  EXPECT_EQ(args_of(out.tool_calls[0]), nlohmann::json({{"city", "Zürich"}}));
  EXPECT_EQ(out.tool_calls[1].name, "run");
  EXPECT_EQ(out.tool_calls[1].id, "Zz9Yy8Xx7");
  EXPECT_EQ(args_of(out.tool_calls[1]), nlohmann::json({{"cmd", "ls [a-z]*"}}));
}

TEST(OutputParserMistral, WhatIsNotACallStaysText) {
  for (const std::string& text : {kToolCalls + "[1, 2, 3]", kToolCalls + R"([{"name": "f", "arguments": {"x": 1})",
                                  kToolCalls + "just words, then {\"a\": 1}", kToolCalls + R"(f[ARGS]{"x": )"}) {
    const OutputDelta out = feed_bytes(tool_options(ToolCallFormat::Mistral), text);
    EXPECT_TRUE(out.tool_calls.empty()) << text;
    EXPECT_EQ(out.content, text);
  }
}

TEST(OutputParserMistral, DetectedFromTheTemplateWithStableIds) {
  EXPECT_EQ(text::detect_tool_call_format(R"({{- "[TOOL_CALLS][" }}{{ tool_call.function|tojson }})"),
            ToolCallFormat::Mistral);
  const std::string id = "call_abcdefghijklmnopqrstuvwx";
  EXPECT_EQ(text::mistral_call_id(id), text::mistral_call_id(std::string(id)));
  EXPECT_NE(text::mistral_call_id("toolu_01"), text::mistral_call_id("toolu_02"));
  EXPECT_TRUE(text::is_mistral_call_id(text::mistral_call_id("toolu_01")));
  EXPECT_EQ(text::mistral_call_id("abcDEF123"), "abcDEF123");
}

TEST(OutputParser, MarkersNameWhatTheParserActsOn) {
  OutputParserOptions options = tool_options(ToolCallFormat::DeepSeekV3);
  options.parse_reasoning = true;
  const std::vector<std::string> markers = OutputParser(options).markers();
  for (const std::string& expected : {std::string("<think>"), std::string("</think>"), kDsCallsBegin, kDsCallBegin,
                                      kDsSep, kDsCallEnd, kDsCallsEnd}) {
    EXPECT_NE(std::find(markers.begin(), markers.end(), expected), markers.end()) << expected;
  }
  options.parse_reasoning = false;
  options.parse_tool_calls = false;
  EXPECT_TRUE(OutputParser(options).markers().empty());
}

// ---- Streaming property ----------------------------------------------------------


struct PropertyCase {
  ToolCallFormat format;
  bool starts_in_reasoning;
  std::string text;
  size_t num_calls;  // from one push, checked so the case tests what it means to
};

std::vector<PropertyCase> property_cases() {
  const std::string hermes_call = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"q\": \"a<b>\"}}\n</tool_call>";
  const std::string ds31_call = kDsCallBegin + "g" + kDsSep + "{\"x\": \"é\"}" + kDsCallEnd;
  return {
      {ToolCallFormat::Hermes, false, "<think>\nplan\n\n</think>\n\nText " + hermes_call + "\n" + hermes_call, 2},
      {ToolCallFormat::Hermes, true, "still thinking</think>\n" + hermes_call + " tail <tool_ca", 1},
      {ToolCallFormat::Hermes, false, "<tool_call>{broken}</tool_call> <tool_call>{\"name\": \"f\"", 0},
      {ToolCallFormat::DeepSeekV3, false,
       "Checking…\n" + kDsCallsBegin + ds_v3_call("get_weather", "{\"city\": \"Zürich\"}") + "\n" +
           ds_v3_call("now", "{}") + kDsCallsEnd,
       2},
      {ToolCallFormat::DeepSeekV3, false, "<think>r</think>" + kDsCallsBegin + ds31_call + ds31_call + kDsCallsEnd, 2},
      {ToolCallFormat::DeepSeekV3, false, "x " + kDsCallsBegin + kDsCallBegin + "bad" + kDsCallEnd + " y <｜tool", 0},
      {ToolCallFormat::Llama3Json, false,
       "  <|python_tag|>{\"name\": \"a\", \"parameters\": {\"s\": \"{[\\\"]}\"}};\n{\"name\": \"b\", \"parameters\": "
       "{}} after",
       2},
      {ToolCallFormat::Llama3Json, false, "<think>\nhm\n</think>\n\n{\"name\": \"a\", \"parameters\": {}}", 1},
      {ToolCallFormat::Llama3Json, false, "{\"answer\": 42} <|python_tag|>", 0},
      {ToolCallFormat::Llama3Json, false, "Plain answer {\"name\": \"a\", \"parameters\": {}}", 0},
      {ToolCallFormat::Llama3Json, false, "\n\n{\"name\": \"a\", \"parameters\": {\"unterminated\": [1, 2", 0},
      {ToolCallFormat::Mistral, false,
       "<think>p</think>Ok " + kToolCalls + "[{\"name\": \"a\", \"arguments\": {\"s\": \"]}[\"}}, {\"name\": \"b\", "
       "\"arguments\": {}}] after [TOOL",
       2},
      {ToolCallFormat::Mistral, false, kToolCalls + "a[ARGS]{\"x\": [1]}" + kToolCalls + "b[ARGS]{}", 2},
      {ToolCallFormat::Mistral, false, "x " + kToolCalls + "[{\"name\": 3}] y", 0},
  };
}

TEST(OutputParserProperty, RandomSplitsMatchOnePush) {
  std::mt19937 rng(1234);
  for (const PropertyCase& c : property_cases()) {
    OutputParserOptions options = tool_options(c.format);
    options.starts_in_reasoning = c.starts_in_reasoning;
    const OutputDelta whole = feed(options, {c.text});
    ASSERT_EQ(whole.tool_calls.size(), c.num_calls) << c.text;
    expect_same(whole, feed_bytes(options, c.text), "bytes: " + c.text);
    for (int trial = 0; trial < 200; ++trial) {
      expect_same(whole, feed(options, random_split(c.text, rng)), "random split: " + c.text);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(OutputParserProperty, EmitsAsSoonAsCertain) {
  // Streaming must not degrade into buffering: text and each call come out in
  // the push that makes them certain.
  struct Case {
    ToolCallFormat format;
    std::vector<std::string> pieces;
  };
  const std::vector<Case> cases = {
      {ToolCallFormat::Hermes, {"Hello ", "<tool_call>{\"name\": \"f\"}", "</tool_call>", "<tool_call>{}"}},
      {ToolCallFormat::DeepSeekV3,
       {"Hello ", kDsCallsBegin + kDsCallBegin + "f" + kDsSep + "{}", kDsCallEnd, kDsCallBegin}},
      {ToolCallFormat::Llama3Json, {"{\"name\": \"f\", \"parameters\": ", "{}}", "; {\"name\""}},
      {ToolCallFormat::Mistral, {"Hello ", kToolCalls + "f[ARGS]{\"a\": ", "1}", kToolCalls + "g"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(to_string(c.format));
    OutputParser parser(tool_options(c.format));
    OutputDelta first = parser.push(c.pieces[0]);
    if (c.format != ToolCallFormat::Llama3Json) {
      EXPECT_EQ(first.content, "Hello ");
    }
    EXPECT_TRUE(first.tool_calls.empty());
    size_t i = 1;
    if (c.format != ToolCallFormat::Llama3Json) {
      EXPECT_TRUE(parser.push(c.pieces[i++]).empty());
    }
    EXPECT_EQ(parser.push(c.pieces[i++]).tool_calls.size(), 1u);
    EXPECT_TRUE(parser.push(c.pieces[i++]).empty());  // an open call is held, not shown
  }
}

}  // namespace
}  // namespace llmesh
