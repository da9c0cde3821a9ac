// The OutputParser's Harmony mode (gpt-oss): channels to reasoning / content,
// function messages to tool calls, what is not harmony to content, and the
// streaming guarantees (random splits, nothing shown while a header or an end
// token may be incomplete), on text as the o200k_harmony tokenizer decodes it.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "text/output_parser.h"
#include "text/streaming_decoder.h"
#include "text/tokenizer_files.h"
#include "text/tool_call_format.h"

#include "output_split.h"
#include "tokenizer_assets.h"

namespace llmesh {

using text::OutputDelta;
using text::OutputParser;
using text::OutputParserOptions;
using text::ToolCallFormat;

namespace {

using test::expect_same;
using test::random_split;

OutputParserOptions harmony_options(bool tool_calls = true) {
  OutputParserOptions options;
  options.tool_call_format = ToolCallFormat::Harmony;
  options.parse_tool_calls = tool_calls;
  options.parse_reasoning = false;  // ignored: harmony's channels are always parsed
  return options;
}

OutputDelta feed(const OutputParserOptions& options, const std::vector<std::string>& pieces) {
  OutputParser parser(options);
  OutputDelta all;
  for (const std::string& piece : pieces) all.append(parser.push(piece));
  all.append(parser.finish());
  return all;
}

OutputDelta parse(const std::string& text, bool tool_calls = true) { return feed(harmony_options(tool_calls), {text}); }

nlohmann::json args_of(const text::ParsedToolCall& call) { return nlohmann::json::parse(call.arguments_json); }

const std::string kAnalysis = "<|channel|>analysis<|message|>";
const std::string kNext = "<|end|><|start|>assistant";

TEST(HarmonyOutput, AnalysisIsReasoningFinalIsContent) {
  const OutputDelta d = parse(kAnalysis + "The user asks for a capital." + kNext +
                              "<|channel|>final<|message|>Paris is the capital.<|return|>");
  EXPECT_EQ(d.reasoning, "The user asks for a capital.");
  EXPECT_EQ(d.content, "Paris is the capital.");
  EXPECT_TRUE(d.tool_calls.empty());
}

TEST(HarmonyOutput, AnswerEndsWithTheOutput) {
  // <|return|> stops generation, so the parser seldom sees it.
  const OutputDelta d = parse(kAnalysis + "Short." + kNext + "<|channel|>final<|message|>Paris.");
  EXPECT_EQ(d.reasoning, "Short.");
  EXPECT_EQ(d.content, "Paris.");
}

TEST(HarmonyOutput, FunctionMessageIsAToolCall) {
  const OutputDelta d = parse(kAnalysis + "Need the weather." + kNext +
                              "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
                              "{\"city\": \"Paris\", \"unit\": \"celsius\"}<|call|>");
  EXPECT_EQ(d.reasoning, "Need the weather.");
  EXPECT_EQ(d.content, "");
  ASSERT_EQ(d.tool_calls.size(), 1u);
  EXPECT_EQ(d.tool_calls[0].name, "get_weather");
  EXPECT_EQ(args_of(d.tool_calls[0]), nlohmann::json({{"city", "Paris"}, {"unit", "celsius"}}));
  EXPECT_EQ(d.tool_calls[0].id.rfind("call_", 0), 0u);
}

TEST(HarmonyOutput, RecipientBeforeTheChannelAndNoConstrain) {
  // As the template renders history: the recipient in the role part; <|call|> swallowed as a stop token.
  const OutputDelta d = parse(" to=functions.search<|channel|>commentary<|message|>{\"query\": \"harmony\"}");
  ASSERT_EQ(d.tool_calls.size(), 1u);
  EXPECT_EQ(d.tool_calls[0].name, "search");
  EXPECT_EQ(args_of(d.tool_calls[0]), nlohmann::json({{"query", "harmony"}}));
  EXPECT_EQ(d.content, "");
}

TEST(HarmonyOutput, PreambleIsContentAndSeveralCallsFollow) {
  const OutputDelta d =
      parse("<|channel|>commentary<|message|>Let me check both." + kNext +
            " to=functions.a<|channel|>commentary <|constrain|>json<|message|>{}<|call|>"
            "<|start|>assistant to=functions.b<|channel|>commentary json<|message|>{\"n\": 1}<|call|>");
  EXPECT_EQ(d.content, "Let me check both.");
  ASSERT_EQ(d.tool_calls.size(), 2u);
  EXPECT_EQ(d.tool_calls[0].name, "a");
  EXPECT_EQ(d.tool_calls[1].name, "b");
  EXPECT_EQ(args_of(d.tool_calls[1]), nlohmann::json({{"n", 1}}));
  EXPECT_NE(d.tool_calls[0].id, d.tool_calls[1].id);
}

TEST(HarmonyOutput, ArgumentsThatAreNoObjectStayText) {
  const std::string header = "<|channel|>commentary to=functions.f <|constrain|>json<|message|>";
  OutputDelta d = parse(header + "not json<|call|>");
  EXPECT_TRUE(d.tool_calls.empty());
  EXPECT_EQ(d.content, header + "not json");
  d = parse(header + "[1, 2]");
  EXPECT_TRUE(d.tool_calls.empty());
  EXPECT_EQ(d.content, header + "[1, 2]");
  // Cut off by max_tokens in the middle of the arguments.
  d = parse(header + "{\"city\": \"Pa");
  EXPECT_TRUE(d.tool_calls.empty());
  EXPECT_EQ(d.content, header + "{\"city\": \"Pa");
  // A JSON string holding an object is taken, as in the other formats.
  d = parse(header + "\"{\\\"x\\\": 1}\"");
  ASSERT_EQ(d.tool_calls.size(), 1u);
  EXPECT_EQ(args_of(d.tool_calls[0]), nlohmann::json({{"x", 1}}));
}

TEST(HarmonyOutput, RecipientsNotCalledAreContentAsWritten) {
  const std::string call = "<|channel|>commentary to=functions.f<|message|>{\"x\": 1}<|call|>";
  // Tools off for the request: the function message is shown as it came.
  OutputDelta d = parse(call, /*tool_calls=*/false);
  EXPECT_TRUE(d.tool_calls.empty());
  EXPECT_EQ(d.content, "<|channel|>commentary to=functions.f<|message|>{\"x\": 1}");
  // A built-in tool (browser, python) is no function of the request's.
  d = parse("<|channel|>analysis to=browser.search<|message|>{\"q\": 1}<|call|>");
  EXPECT_TRUE(d.tool_calls.empty());
  EXPECT_EQ(d.reasoning, "");
  EXPECT_EQ(d.content, "<|channel|>analysis to=browser.search<|message|>{\"q\": 1}");
}

TEST(HarmonyOutput, HeaderCutOffIsContent) {
  EXPECT_EQ(parse("<|channel|>analy").content, "<|channel|>analy");
  EXPECT_EQ(parse(kAnalysis + "r" + kNext + "<|channel|>fin").content, "assistant<|channel|>fin");
  EXPECT_EQ(parse(kAnalysis + "r" + kNext + "<|channel|>fin").reasoning, "r");
  EXPECT_EQ(parse("<|sta").content, "<|sta");
  // A header ended by an end token instead of <|message|>: its text, then the next message.
  const OutputDelta d = parse("<|channel|>final<|end|><|start|>assistant<|channel|>final<|message|>ok");
  EXPECT_EQ(d.content, "<|channel|>finalok");
}

TEST(HarmonyOutput, TextThatIsNoHarmonyIsContent) {
  EXPECT_EQ(parse("Hello world").content, "Hello world");
  EXPECT_EQ(parse("").content, "");
  EXPECT_EQ(parse("<think>x</think>y").content, "<think>x</think>y");  // harmony never looks for <think>
  // Longer than any header: content from the start; an end token later still ends the message.
  const std::string plain(300, 'a');
  const OutputDelta d = parse(plain + "<|end|><|start|>assistant" + "<|channel|>final<|message|>b");
  EXPECT_EQ(d.content, plain + "b");
  const OutputDelta cut = parse(std::string(255, 'x') + "é<|end|><|start|>assistant<|channel|>analysis<|message|>r");
  EXPECT_EQ(cut.content, std::string(255, 'x') + "é");
  EXPECT_EQ(cut.reasoning, "r");
}

TEST(HarmonyOutput, InReasoningOnlyInsideAnalysis) {
  OutputParser parser(harmony_options());
  EXPECT_FALSE(parser.in_reasoning());
  parser.push(kAnalysis + "thinking");
  EXPECT_TRUE(parser.in_reasoning());
  parser.push(kNext + "<|channel|>final<|message|>x");
  EXPECT_FALSE(parser.in_reasoning());
}

TEST(HarmonyOutput, MarkersAreTheHarmonyTokens) {
  const std::vector<std::string> markers = OutputParser(harmony_options(false)).markers();
  for (const char* token :
       {"<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|return|>", "<|call|>"}) {
    EXPECT_NE(std::find(markers.begin(), markers.end(), token), markers.end()) << token;
  }
  EXPECT_EQ(std::find(markers.begin(), markers.end(), "<think>"), markers.end());
  EXPECT_EQ(markers.size(), 7u);
}

TEST(HarmonyOutput, EmitsAsSoonAsCertain) {
  OutputParser parser(harmony_options());
  EXPECT_TRUE(parser.push("<|channel|>analysis").empty());  // a header is held until <|message|>
  EXPECT_TRUE(parser.push("<|message|>").empty());
  EXPECT_EQ(parser.push("Hmm").reasoning, "Hmm");
  EXPECT_TRUE(parser.push("<|en").empty());  // may be <|end|>
  EXPECT_TRUE(parser.push("d|><|start|>assistant").empty());
  EXPECT_TRUE(parser.push("<|channel|>final<|message|>").empty());
  EXPECT_EQ(parser.push("Hi <|").content, "Hi ");
  EXPECT_EQ(parser.push("x").content, "<|x");  // not an end token after all
  EXPECT_TRUE(parser.push("<|end|><|start|>assistant to=functions.f<|channel|>commentary<|message|>{").empty());
  EXPECT_TRUE(parser.push("}").empty());  // a call is held to its end
  EXPECT_EQ(parser.push("<|call|>").tool_calls.size(), 1u);
  EXPECT_TRUE(parser.finish().empty());
}

TEST(HarmonyOutput, DetectedFromItsTemplate) {
  EXPECT_EQ(text::detect_tool_call_format("{{ '<|start|>assistant' }}{{ '<|channel|>final' }}"),
            ToolCallFormat::Harmony);
  EXPECT_EQ(text::detect_tool_call_format("<|start|>assistant only"), ToolCallFormat::None);
  EXPECT_STREQ(text::to_string(ToolCallFormat::Harmony), "harmony");
}

TEST(HarmonyOutput, HeaderParts) {
  text::HarmonyHeader h = text::parse_harmony_header("assistant to=functions.f<|channel|>commentary <|constrain|>json");
  EXPECT_EQ(h.role, "assistant");
  EXPECT_EQ(h.recipient, "functions.f");
  EXPECT_EQ(h.channel, "commentary");
  EXPECT_EQ(h.content_type, "json");
  h = text::parse_harmony_header("<|channel|>final");
  EXPECT_EQ(h.role, "");
  EXPECT_EQ(h.channel, "final");
  EXPECT_EQ(h.recipient, "");
  h = text::parse_harmony_header("<|channel|>commentary to=functions.g<|other|>junk");
  EXPECT_EQ(h.recipient, "functions.g");
  EXPECT_EQ(h.channel, "commentary");
}

// ---- streaming property -----------------------------------------------------------


TEST(HarmonyOutput, RandomSplitsMatchOnePush) {
  struct Case {
    bool tool_calls;
    std::string text;
    size_t num_calls;
  };
  const std::vector<Case> cases = {
      {true, kAnalysis + "Zürich → 天气?" + kNext + "<|channel|>final<|message|>Sunny ☀️<|return|>", 0},
      {true,
       kAnalysis + "plan" + kNext + "<|channel|>commentary<|message|>Checking." + kNext +
           " to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{\"city\": \"Zürich\"}<|call|>" +
           "<|start|>assistant<|channel|>commentary to=functions.now<|message|>{}",
       2},
      {true, "<|channel|>commentary to=functions.f<|message|>{broken<|call|> tail <|cha", 0},
      {false, "<|channel|>commentary to=functions.f<|message|>{\"a\": 1}<|call|>" + kNext + "<|channel|>final", 0},
      {true,
       std::string(250, 'x') + "é<|end|>" + std::string(40, 'y') + "<|start|>assistant<|channel|>final<|message|>z", 0},
      {true, "plain answer with no header at all, é and <| and <|end", 0},
      // No header in the first 256 bytes, a character across byte 256, then an end token: content, then a message.
      {true, std::string(255, 'x') + "é<|end|>" + "<|start|>assistant<|channel|>analysis<|message|>r", 0},
  };
  std::mt19937 rng(4242);
  for (const Case& c : cases) {
    const OutputParserOptions options = harmony_options(c.tool_calls);
    const OutputDelta whole = feed(options, {c.text});
    ASSERT_EQ(whole.tool_calls.size(), c.num_calls) << c.text;
    std::vector<std::string> bytes;
    for (char ch : c.text) bytes.emplace_back(1, ch);
    expect_same(whole, feed(options, bytes), "bytes: " + c.text);
    for (int trial = 0; trial < 200; ++trial) {
      expect_same(whole, feed(options, random_split(c.text, rng, 12)), "random split: " + c.text);
      if (HasFatalFailure()) return;
    }
  }
}

// Random texts made of harmony's pieces (tokens, header words, JSON, UTF-8, fragments of tokens):
// whatever they say, one push and random pushes agree, with tool calls on and off.
TEST(HarmonyOutput, RandomTextsOfHarmonyPiecesMatchOnePush) {
  const std::vector<std::string> pieces = {
      "<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|return|>", "<|call|>", "assistant",
      "analysis", "final", "commentary", " to=functions.f", " to=browser.x", "json", " ", "{\"a\": 1}", "{", "}",
      "é", "天", "<|", "|>", "<|sta", "x", "\n", std::string(40, 'z')};
  std::mt19937 rng(777);
  std::uniform_int_distribution<size_t> pick(0, pieces.size() - 1);
  std::uniform_int_distribution<int> length(0, 30);
  for (int trial = 0; trial < 400; ++trial) {
    std::string text;
    for (int n = length(rng); n > 0; --n) text += pieces[pick(rng)];
    for (bool tool_calls : {true, false}) {
      const OutputParserOptions options = harmony_options(tool_calls);
      const OutputDelta whole = feed(options, {text});
      expect_same(whole, feed(options, random_split(text, rng, 12)), "random text: " + text);
      if (HasFatalFailure()) return;
    }
  }
}

// ---- real tokens ------------------------------------------------------------------

// The text a gpt-oss model generates, as token ids of the o200k_harmony tokenizer, decoded
// one token at a time (special tokens kept, as the server keeps the parser's markers).
TEST(HarmonyOutput, TokensOfTheHarmonyTokenizer) {
  LLMESH_REQUIRE_TOKENIZER_ASSET("gptoss");
  const text::Tokenizer& tokenizer = test::asset_tokenizer("gptoss");
  for (const char* token :
       {"<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|return|>", "<|call|>"}) {
    ASSERT_TRUE(tokenizer.token_id(token).has_value()) << token;
  }
  EXPECT_EQ(*tokenizer.token_id("<|channel|>"), 200005);
  EXPECT_EQ(*tokenizer.token_id("<|call|>"), 200012);
  const std::string generated = kAnalysis + "Need weather for Zürich." + kNext +
                                "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
                                "{\"city\":\"Zürich\"}<|call|>";
  const std::vector<int32_t> ids = tokenizer.encode(generated, /*parse_special=*/true);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 200005), 2);  // the channels are special tokens, not text
  text::StreamingDecoder decoder(tokenizer, /*skip_special=*/false);
  OutputParser parser(harmony_options());
  OutputDelta all;
  for (int32_t id : ids) all.append(parser.push(decoder.push(id)));
  all.append(parser.push(decoder.flush()));
  all.append(parser.finish());
  EXPECT_EQ(all.reasoning, "Need weather for Zürich.");
  EXPECT_EQ(all.content, "");
  ASSERT_EQ(all.tool_calls.size(), 1u);
  EXPECT_EQ(all.tool_calls[0].name, "get_weather");
  EXPECT_EQ(args_of(all.tool_calls[0]), nlohmann::json({{"city", "Zürich"}}));
}

// A gpt-oss directory whose template is a chat_template.jinja of its own (as transformers writes
// it, and as llmesh's harmony template would be shipped): read, detected as harmony.
TEST(HarmonyOutput, ChatTemplateJinjaBesideTheTokenizer) {
  LLMESH_REQUIRE_TOKENIZER_ASSET("gptoss");
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("llmesh_harmony_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::create_symlink(test::asset_tokenizer_json("gptoss"), dir / "tokenizer.json");
  const std::string source = "{{ '<|start|>assistant' }}{# <|channel|> #}";
  std::ofstream(dir / "chat_template.jinja", std::ios::binary) << source;
  text::TokenizerFiles files = text::open_hf_tokenizer(dir.string());
  EXPECT_EQ(files.chat_template, source);
  EXPECT_EQ(text::detect_tool_call_format(files.chat_template), ToolCallFormat::Harmony);
  // tokenizer_config.json's own template wins.
  std::ofstream(dir / "tokenizer_config.json") << R"({"chat_template": "{{ 'own' }}", "eos_token": "<|return|>"})";
  files = text::open_hf_tokenizer(dir.string());
  EXPECT_EQ(files.chat_template, "{{ 'own' }}");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace llmesh
