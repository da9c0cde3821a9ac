// gpt-oss's harmony format at the API edge, with llmesh's harmony template
// (tests/golden/templates/gptoss.jinja) and the real o200k_harmony tokenizer
// (assets/npm/tokenizer-gptoss): each protocol's reasoning effort reaches the
// prompt's "Reasoning:" line, the reasoning budget forces the end of the
// analysis, and generated tokens (special tokens included, the stopping
// <|call|> swallowed) come out as reasoning, content and tool calls.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "api/anthropic_request.h"
#include "api/generation_pipeline.h"
#include "api/openai_request.h"
#include "api/output_options.h"
#include "api/reasoning_effort.h"
#include "api/responses_request.h"
#include "api/token_text_pipeline.h"
#include "runtime/loaded_model.h"
#include "text/chat_template.h"
#include "text/tokenizer_json.h"
#include "text/tool_call_format.h"

#include "golden_templates.h"
#include "request_from_json.h"

namespace llmesh::api {

namespace {

using json = nlohmann::json;
using OJson = nlohmann::ordered_json;

const text::Tokenizer* gptoss_tokenizer() {
  static std::unique_ptr<text::Tokenizer> tokenizer = [] {
    const std::string path = std::string(LLMESH_SOURCE_DIR) + "/assets/npm/tokenizer-gptoss/models/tokenizer.json";
    if (!std::filesystem::exists(path)) return std::unique_ptr<text::Tokenizer>();
    return std::make_unique<text::Tokenizer>(text::read_hf_tokenizer_json(path));
  }();
  return tokenizer.get();
}

using test::from_chat;
using test::from_messages;
using test::from_responses;

std::string reasoning_line(const GenerationRequest& request) {
  const std::string prompt = render_prompt(harmony_template(), request);
  const size_t at = prompt.find("\nReasoning: ");
  if (at == std::string::npos) return "(none)";
  return prompt.substr(at + 12, prompt.find('\n', at + 1) - at - 12);
}

const char* kMessages = R"("messages": [{"role": "user", "content": "hi"}])";

TEST(HarmonyRequest, ChatReasoningEffortReachesTheTemplate) {
  auto chat = [](const std::string& extra) {
    return from_chat(std::string(R"({"model": "m", )") + kMessages + extra + "}");
  };
  EXPECT_EQ(reasoning_line(chat("")), "medium");  // the template's default
  EXPECT_EQ(reasoning_line(chat(R"(, "reasoning_effort": "high")")), "high");
  EXPECT_EQ(reasoning_line(chat(R"(, "reasoning_effort": "low")")), "low");
  EXPECT_EQ(reasoning_line(chat(R"(, "reasoning_effort": "minimal")")), "low");
  EXPECT_EQ(reasoning_line(chat(R"(, "reasoning_effort": "medium")")), "medium");
  EXPECT_EQ(reasoning_line(chat(R"(, "reasoning_effort": "xhigh")")), "high");
  EXPECT_EQ(reasoning_line(chat(R"(, "reasoning_effort": "none")")), "low");
  // A client's own template kwarg wins, as every chat_template_kwargs entry does.
  EXPECT_EQ(
      reasoning_line(chat(R"(, "reasoning_effort": "low", "chat_template_kwargs": {"reasoning_effort": "high"})")),
      "high");
}

TEST(HarmonyRequest, ResponsesAndAnthropicEffortReachTheTemplate) {
  const std::string input = R"("input": "hi")";
  EXPECT_EQ(reasoning_line(from_responses(R"({"model": "m", )" + input + "}")), "medium");
  EXPECT_EQ(reasoning_line(from_responses(R"({"model": "m", )" + input + R"(, "reasoning": {"effort": "high"}})")),
            "high");
  EXPECT_EQ(reasoning_line(from_responses(R"({"model": "m", )" + input + R"(, "reasoning": {"effort": "low"}})")),
            "low");
  const std::string base = std::string(R"({"model": "m", "max_tokens": 100, )") + kMessages;
  EXPECT_EQ(reasoning_line(from_messages(base + "}")), "medium");
  EXPECT_EQ(reasoning_line(from_messages(base + R"(, "output_config": {"effort": "max"}})")), "high");
  EXPECT_EQ(reasoning_line(
                from_messages(base + R"(, "thinking": {"type": "adaptive"}, "output_config": {"effort": "low"}})")),
            "low");
}

TEST(HarmonyRequest, TheReasoningBudgetForcesTheEndOfTheAnalysis) {
  const text::Tokenizer* tokenizer = gptoss_tokenizer();
  if (!tokenizer) GTEST_SKIP() << "assets/npm/tokenizer-gptoss missing (run scripts/fetch_assets.sh)";
  text::OutputParserOptions parser;
  parser.tool_call_format = text::ToolCallFormat::Harmony;
  GenerationRequest request =
      from_chat(std::string(R"({"model": "m", )") + kMessages + R"(, "reasoning_effort": "low"})");
  request.enable_thinking = false;  // gpt-oss reasons anyway: the budget still holds
  const engine::ReasoningBudgetOptions budget = reasoning_budget_options(*tokenizer, parser, request);
  ASSERT_TRUE(budget.enabled());
  EXPECT_EQ(budget.max_tokens, 1024);
  EXPECT_EQ(budget.open_marker, "<|channel|>analysis<|message|>");
  EXPECT_EQ(budget.close_marker, "<|end|>");
  // <|end|> <|start|> assistant <|channel|> final <|message|>: the special tokens as their own ids.
  const std::vector<int32_t>& ids = budget.close_ids;
  ASSERT_GE(ids.size(), 6u);
  EXPECT_EQ(ids.front(), 200007);
  EXPECT_EQ(ids[1], 200006);
  EXPECT_EQ(ids.back(), 200008);
  EXPECT_NE(std::find(ids.begin(), ids.end(), 200005), ids.end());
  EXPECT_EQ(tokenizer->decode(ids), text::kHarmonyEndOfAnalysis);

  // The engine's budget walks the analysis and forces those ids once it is spent.
  engine::ReasoningBudgetOptions small = budget;
  small.max_tokens = 2;
  engine::ReasoningBudget walker(small);
  for (int32_t id : tokenizer->encode("<|channel|>analysis<|message|>", true)) walker.accept_token(id);
  EXPECT_TRUE(walker.in_reasoning());
  for (int32_t id : tokenizer->encode("Let me think", false)) {
    if (walker.forced_token()) break;
    walker.accept_token(id);
  }
  std::vector<int32_t> forced;
  while (std::optional<int32_t> id = walker.forced_token()) {
    forced.push_back(*id);
    walker.accept_token(*id);
  }
  EXPECT_EQ(forced, ids);
  EXPECT_FALSE(walker.in_reasoning());
}

TEST(HarmonyRequest, OpenHeaderOfThePrompt) {
  EXPECT_EQ(text::harmony_open_header("<|start|>user<|message|>hi<|end|><|start|>assistant"), std::nullopt);
  EXPECT_EQ(text::harmony_open_header("<|start|>assistant<|channel|>final<|message|>"), "assistant<|channel|>final");
  EXPECT_EQ(text::harmony_open_header("<|start|>assistant<|channel|>final<|message|>Sure,"),
            "assistant<|channel|>final");
  EXPECT_EQ(text::harmony_open_header("<|start|>user<|message|>hi<|end|>"), std::nullopt);
}

// Generated ids through the server's token -> text path: the harmony tokens are special, kept
// for the parser; the <|call|> that stops generation is not text, and the call still parses.
TEST(HarmonyRequest, GeneratedTokensBecomeReasoningAndACall) {
  const text::Tokenizer* tokenizer = gptoss_tokenizer();
  if (!tokenizer) GTEST_SKIP() << "assets/npm/tokenizer-gptoss missing (run scripts/fetch_assets.sh)";
  PipelineOptions options;
  options.parser.tool_call_format = text::ToolCallFormat::Harmony;
  options.parser.parse_tool_calls = true;
  TokenTextPipeline pipeline(*tokenizer, options);
  const std::vector<int32_t> ids = tokenizer->encode(
      "<|channel|>analysis<|message|>User wants weather.<|end|><|start|>assistant<|channel|>commentary "
      "to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>",
      true);
  ASSERT_EQ(ids.back(), 200012);
  text::OutputDelta all;
  for (size_t i = 0; i < ids.size(); ++i) {
    engine::TokenEvent event;
    event.token_id = ids[i];
    if (i + 1 == ids.size()) event.finish_reason = engine::FinishReason::Eos;  // <|call|> is a stop token
    all.append(std::move(pipeline.push(event).delta));
  }
  EXPECT_EQ(all.reasoning, "User wants weather.");
  EXPECT_EQ(all.content, "");
  ASSERT_EQ(all.tool_calls.size(), 1u);
  EXPECT_EQ(all.tool_calls[0].name, "get_weather");
  EXPECT_EQ(json::parse(all.tool_calls[0].arguments_json), json({{"city", "Paris"}}));
}

// A served gpt-oss as the request path sees it (its tokenizer and llmesh's harmony template; no
// weights): the format, the parser's options, and the message a constrained output or a prefill
// continues, with the parser starting in that message's body.
TEST(HarmonyRequest, TheServerPathOfAHarmonyModel) {
  const text::Tokenizer* tokenizer = gptoss_tokenizer();
  if (!tokenizer) GTEST_SKIP() << "assets/npm/tokenizer-gptoss missing (run scripts/fetch_assets.sh)";
  std::ifstream in(std::string(LLMESH_SOURCE_DIR) + "/tests/golden/templates/gptoss.jinja", std::ios::binary);
  std::stringstream source;
  source << in.rdbuf();
  runtime::LoadedModel model;
  model.tokenizer_files.chat_template = source.str();
  model.tokenizer = std::make_unique<text::Tokenizer>(text::read_hf_tokenizer_json(
      std::string(LLMESH_SOURCE_DIR) + "/assets/npm/tokenizer-gptoss/models/tokenizer.json"));
  model.chat_template = std::make_unique<text::ChatTemplate>(source.str(), "<|startoftext|>", "<|return|>");
  ServerContext ctx;
  ctx.model = &model;
  EXPECT_EQ(model_tool_call_format(ctx), text::ToolCallFormat::Harmony);

  const std::string tools = R"([{"type": "function", "function": {"name": "get_weather", "parameters":
      {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}])";
  auto chat = [&](const std::string& extra) {
    return from_chat(std::string(R"({"model": "m", )") + kMessages + R"(, "tools": )" + tools + extra + "}");
  };
  // Free generation: from a header, tool calls parsed, <think> never looked for.
  GenerationRequest free = chat("");
  std::string prompt = render_prompt(ctx, free);
  EXPECT_TRUE(prompt.ends_with("<|start|>assistant")) << prompt;
  text::OutputParserOptions parser = output_parser_options(ctx, prompt, free.parse_tool_calls, free.tools);
  EXPECT_EQ(parser.tool_call_format, text::ToolCallFormat::Harmony);
  EXPECT_TRUE(parser.parse_tool_calls);
  EXPECT_EQ(parser.harmony_open_header, "");
  EXPECT_EQ(text::OutputParser(parser).markers().size(), 7u);

  // tool_choice required with one function: the prompt opens the call, the model writes the arguments.
  GenerationRequest forced = chat(R"(, "tool_choice": "required")");
  prompt = render_prompt(ctx, forced);
  EXPECT_TRUE(
      prompt.ends_with("<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"))
      << prompt;
  parser = output_parser_options(ctx, prompt, forced.parse_tool_calls, forced.tools);
  text::OutputParser call_parser(parser);
  text::OutputDelta d = call_parser.push("{\"city\":\"Oslo\"}");
  d.append(call_parser.finish());
  ASSERT_EQ(d.tool_calls.size(), 1u);
  EXPECT_EQ(d.tool_calls[0].name, "get_weather");
  EXPECT_EQ(json::parse(d.tool_calls[0].arguments_json), json({{"city", "Oslo"}}));

  // A JSON schema answer continues the final channel.
  GenerationRequest schema =
      from_chat(std::string(R"({"model": "m", )") + kMessages + R"(, "response_format": {"type": "json_object"}})");
  prompt = render_prompt(ctx, schema);
  EXPECT_TRUE(prompt.ends_with("<|start|>assistant<|channel|>final<|message|>")) << prompt;
  text::OutputParser answer(output_parser_options(ctx, prompt, false, schema.tools));
  d = answer.push("{\"a\": 1}");
  d.append(answer.finish());
  EXPECT_EQ(d.content, "{\"a\": 1}");
  EXPECT_EQ(d.reasoning, "");

  // An Anthropic prefill too: the answer's first words, then the model's.
  GenerationRequest prefill = from_messages(
      R"({"model": "m", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"},
          {"role": "assistant", "content": "Sure,"}]})");
  prompt = render_prompt(ctx, prefill);
  EXPECT_TRUE(prompt.ends_with("<|start|>assistant<|channel|>final<|message|>Sure,")) << prompt;
  text::OutputParser rest(output_parser_options(ctx, prompt, false, prefill.tools));
  d = rest.push(" here it is.<|return|>");
  d.append(rest.finish());
  EXPECT_EQ(d.content, " here it is.");
}

TEST(HarmonyRequest, StopTokensAreReturnAndCallNotEnd) {
  const text::Tokenizer* tokenizer = gptoss_tokenizer();
  if (!tokenizer) GTEST_SKIP() << "assets/npm/tokenizer-gptoss missing (run scripts/fetch_assets.sh)";
  std::vector<int32_t> eos = {200002};  // a generation_config that lists only <|return|>
  EXPECT_TRUE(text::use_harmony_stop_tokens(*tokenizer, eos));
  EXPECT_EQ(eos, (std::vector<int32_t>{200002, 200012}));
  eos = {200002, 199999, 200012, 200007};  // GGUF's end-of-turn heuristics add <|end|>
  EXPECT_TRUE(text::use_harmony_stop_tokens(*tokenizer, eos));
  EXPECT_EQ(eos, (std::vector<int32_t>{200002, 199999, 200012}));
}

}  // namespace
}  // namespace llmesh::api
