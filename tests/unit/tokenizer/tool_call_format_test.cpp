// detect_tool_call_format on the real chat templates in assets/npm, and a
// round trip: each family's own template renders an assistant tool call, and
// the OutputParser set to the detected format must read back the same call
// (the template is the independent reference for the syntax).
#include "text/tool_call_format.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "text/chat_template.h"
#include "text/output_parser.h"

namespace llmesh {

using text::ChatTemplate;
using text::ChatTemplateOptions;
using text::detect_tool_call_format;
using text::OutputDelta;
using text::OutputParser;
using text::OutputParserOptions;
using text::parse_tool_call_body;
using text::tool_call_markers;
using text::ToolCallFormat;
using text::ToolCallMarkers;

namespace {

std::string source_dir() {
  const char* env = std::getenv("LLMESH_SOURCE_DIR");
  return env ? env : LLMESH_SOURCE_DIR;
}

struct TemplateAsset {
  std::string source;
  std::string bos_token;
  std::string eos_token;
};

std::string token_text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content")) return value["content"].get<std::string>();
  return "";
}

// assets/npm/tokenizer-<name>/models/tokenizer_config.json; nullopt when the assets are missing.
std::optional<TemplateAsset> load_template(const std::string& name) {
  const std::string path = source_dir() + "/assets/npm/tokenizer-" + name + "/models/tokenizer_config.json";
  if (!std::filesystem::exists(path)) return std::nullopt;
  std::ifstream in(path);
  const nlohmann::json config = nlohmann::json::parse(in);
  TemplateAsset asset;
  asset.source = config.value("chat_template", "");
  if (config.contains("bos_token")) asset.bos_token = token_text(config["bos_token"]);
  if (config.contains("eos_token")) asset.eos_token = token_text(config["eos_token"]);
  return asset;
}

#define LOAD_TEMPLATE_OR_SKIP(var, name)                                                                \
  auto var##_loaded = load_template(name);                                                              \
  if (!var##_loaded) GTEST_SKIP() << "assets/npm/tokenizer-" name " missing (scripts/fetch_assets.sh)"; \
  const TemplateAsset& var = *var##_loaded

TEST(ToolCallFormat, DetectsQwenAsHermes) {
  LOAD_TEMPLATE_OR_SKIP(qwen3, "qwen3");
  EXPECT_EQ(detect_tool_call_format(qwen3.source), ToolCallFormat::Hermes);
  LOAD_TEMPLATE_OR_SKIP(qwen25, "qwen2_5");
  EXPECT_EQ(detect_tool_call_format(qwen25.source), ToolCallFormat::Hermes);
}

TEST(ToolCallFormat, DetectsDeepSeekV3) {
  LOAD_TEMPLATE_OR_SKIP(deepseek, "deepseek_v3");
  EXPECT_EQ(detect_tool_call_format(deepseek.source), ToolCallFormat::DeepSeekV3);
}

TEST(ToolCallFormat, DetectsLlama32Json) {
  LOAD_TEMPLATE_OR_SKIP(llama, "llama3_2");
  EXPECT_EQ(detect_tool_call_format(llama.source), ToolCallFormat::Llama3Json);
}

TEST(ToolCallFormat, TemplatesWithoutToolSyntaxGiveNone) {
  // The llama3_1 asset ships the plain Llama 3 template (no tools at all).
  LOAD_TEMPLATE_OR_SKIP(llama31, "llama3_1");
  ASSERT_EQ(llama31.source.find("tool"), std::string::npos) << "the asset changed: update this test";
  EXPECT_EQ(detect_tool_call_format(llama31.source), ToolCallFormat::None);
  LOAD_TEMPLATE_OR_SKIP(gemma, "gemma3");
  EXPECT_EQ(detect_tool_call_format(gemma.source), ToolCallFormat::None);
  EXPECT_EQ(detect_tool_call_format(""), ToolCallFormat::None);
}

TEST(ToolCallFormat, DetectsMistral) {
  LOAD_TEMPLATE_OR_SKIP(mistral, "mistral_nemo");
  EXPECT_EQ(detect_tool_call_format(mistral.source), ToolCallFormat::Mistral);
}

TEST(ToolCallFormat, DetectsLlama31Markers) {
  // Excerpts of the Llama 3.1 instruct template (its tool parts).
  EXPECT_EQ(detect_tool_call_format("{{- \"Environment: ipython\\n\" }}"), ToolCallFormat::Llama3Json);
  EXPECT_EQ(detect_tool_call_format("{{- '<|python_tag|>' + tool_call.name + '.call(' }}"), ToolCallFormat::Llama3Json);
  // "parameters" alone (without Llama's headers) is too common to mean Llama.
  EXPECT_EQ(detect_tool_call_format("{{ tool.function.parameters | tojson }} \"parameters\""), ToolCallFormat::None);
}

TEST(ToolCallFormat, Markers) {
  const ToolCallMarkers hermes = tool_call_markers(ToolCallFormat::Hermes);
  EXPECT_EQ(hermes.call_open, "<tool_call>");
  EXPECT_EQ(hermes.call_close, "</tool_call>");
  EXPECT_TRUE(hermes.section_open.empty());
  const ToolCallMarkers deepseek = tool_call_markers(ToolCallFormat::DeepSeekV3);
  EXPECT_EQ(deepseek.section_open, "<｜tool▁calls▁begin｜>");
  EXPECT_EQ(deepseek.call_open, "<｜tool▁call▁begin｜>");
  EXPECT_EQ(deepseek.separator, "<｜tool▁sep｜>");
  EXPECT_EQ(deepseek.call_close, "<｜tool▁call▁end｜>");
  EXPECT_EQ(deepseek.section_close, "<｜tool▁calls▁end｜>");
  EXPECT_TRUE(tool_call_markers(ToolCallFormat::Llama3Json).call_open.empty());
  EXPECT_STREQ(to_string(ToolCallFormat::DeepSeekV3), "deepseek_v3");
}

TEST(ToolCallFormat, ParsesBodies) {
  std::string name, arguments;
  ASSERT_TRUE(parse_tool_call_body(ToolCallFormat::DeepSeekV3,
                                   "function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```", &name,
                                   &arguments));
  EXPECT_EQ(name, "get_weather");
  EXPECT_EQ(nlohmann::json::parse(arguments), nlohmann::json({{"city", "Paris"}}));
  ASSERT_TRUE(
      parse_tool_call_body(ToolCallFormat::DeepSeekV3, "get_time<｜tool▁sep｜>{\"tz\": \"UTC\"}", &name, &arguments));
  EXPECT_EQ(name, "get_time");
  EXPECT_EQ(nlohmann::json::parse(arguments), nlohmann::json({{"tz", "UTC"}}));
  EXPECT_FALSE(parse_tool_call_body(ToolCallFormat::DeepSeekV3, "get_time{\"tz\": \"UTC\"}", &name, &arguments));
  EXPECT_FALSE(parse_tool_call_body(ToolCallFormat::DeepSeekV3, "function<｜tool▁sep｜>f\n```json\n{oops\n```", &name,
                                    &arguments));
  EXPECT_FALSE(parse_tool_call_body(ToolCallFormat::DeepSeekV3, "f<｜tool▁sep｜>[1, 2]", &name, &arguments));

  ASSERT_TRUE(
      parse_tool_call_body(ToolCallFormat::Llama3Json, R"({"name": "f", "parameters": {"x": 1}})", &name, &arguments));
  EXPECT_EQ(name, "f");
  EXPECT_EQ(nlohmann::json::parse(arguments), nlohmann::json({{"x", 1}}));
  // A bare {"name": …} is ordinary JSON for Llama, a call without arguments for Hermes.
  EXPECT_FALSE(parse_tool_call_body(ToolCallFormat::Llama3Json, R"({"name": "Ada"})", &name, &arguments));
  ASSERT_TRUE(parse_tool_call_body(ToolCallFormat::Hermes, R"({"name": "now"})", &name, &arguments));
  EXPECT_EQ(arguments, "{}");
  // Arguments given as a string must hold an object.
  EXPECT_FALSE(parse_tool_call_body(ToolCallFormat::Hermes, R"({"name": "f", "arguments": "x=1"})", &name, &arguments));
  EXPECT_FALSE(parse_tool_call_body(ToolCallFormat::None, R"({"name": "f", "arguments": {}})", &name, &arguments));
}

// Renders [user, assistant with `calls`] with the family's template and returns
// what the model would have generated for the assistant turn: the text after
// the generation prompt, up to `end_of_turn`.
std::string rendered_assistant_output(const TemplateAsset& asset, const nlohmann::json& calls,
                                      const std::string& end_of_turn) {
  ChatTemplate chat(asset.source, asset.bos_token, asset.eos_token);
  const nlohmann::json user = {{"role", "user"}, {"content", "What is the weather in Paris?"}};
  nlohmann::json tool_calls = nlohmann::json::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    tool_calls.push_back({{"id", "call_" + std::to_string(i)},
                          {"type", "function"},
                          {"function", {{"name", calls[i]["name"]}, {"arguments", calls[i]["arguments"].dump()}}}});
  }
  // DeepSeek's template renders calls only for null content; Qwen's needs a string.
  const nlohmann::json content =
      asset.source.find("tool▁calls▁begin") != std::string::npos ? nlohmann::json() : nlohmann::json("");
  const nlohmann::json assistant = {{"role", "assistant"}, {"content", content}, {"tool_calls", tool_calls}};
  const nlohmann::json tools = nlohmann::json::parse(R"([{"type": "function", "function": {
      "name": "get_weather", "description": "Weather of a city",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}])");
  ChatTemplateOptions with_prompt;
  with_prompt.add_generation_prompt = true;
  ChatTemplateOptions without_prompt;
  without_prompt.add_generation_prompt = false;
  const std::string prompt = chat.render(nlohmann::json::array({user}), tools, with_prompt);
  const std::string full = chat.render(nlohmann::json::array({user, assistant}), tools, without_prompt);
  EXPECT_EQ(full.compare(0, prompt.size(), prompt), 0) << "prompt is not a prefix:\n" << prompt << "\n---\n" << full;
  std::string output = full.substr(std::min(prompt.size(), full.size()));
  const size_t end = output.rfind(end_of_turn);
  EXPECT_NE(end, std::string::npos) << output;
  if (end != std::string::npos) output.resize(end);
  return output;
}

void expect_round_trip(const TemplateAsset& asset, const nlohmann::json& calls, const std::string& end_of_turn) {
  const ToolCallFormat format = detect_tool_call_format(asset.source);
  const std::string output = rendered_assistant_output(asset, calls, end_of_turn);
  OutputParserOptions options;
  options.parse_tool_calls = true;
  options.tool_call_format = format;
  // Byte by byte: the hardest split for the markers.
  OutputParser parser(options);
  OutputDelta all;
  for (char c : output) all.append(parser.push(std::string(1, c)));
  all.append(parser.finish());
  SCOPED_TRACE(output);
  EXPECT_EQ(all.content, "");
  ASSERT_EQ(all.tool_calls.size(), calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(all.tool_calls[i].name, calls[i]["name"]);
    EXPECT_EQ(nlohmann::json::parse(all.tool_calls[i].arguments_json), calls[i]["arguments"]);
  }
}

const nlohmann::json kTwoCalls = nlohmann::json::array(
    {{{"name", "get_weather"}, {"arguments", {{"city", "Paris"}, {"days", 3}}}},
     {{"name", "get_time"}, {"arguments", {{"zone", "Europe/Paris"}, {"nested", {{"a", {1, 2}}}}}}}});

TEST(ToolCallFormat, RoundTripsQwen3TemplateCalls) {
  LOAD_TEMPLATE_OR_SKIP(qwen3, "qwen3");
  expect_round_trip(qwen3, kTwoCalls, "<|im_end|>");
}

TEST(ToolCallFormat, RoundTripsDeepSeekV3TemplateCalls) {
  LOAD_TEMPLATE_OR_SKIP(deepseek, "deepseek_v3");
  expect_round_trip(deepseek, kTwoCalls, "<｜end▁of▁sentence｜>");
}

TEST(ToolCallFormat, RoundTripsLlama32TemplateCall) {
  LOAD_TEMPLATE_OR_SKIP(llama, "llama3_2");
  // Llama 3.2's template renders a single call per message.
  expect_round_trip(llama, nlohmann::json::array({kTwoCalls[0]}), "<|eot_id|>");
}

}  // namespace
}  // namespace llmesh
