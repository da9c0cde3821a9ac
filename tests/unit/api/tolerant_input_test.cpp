// What each protocol parser ignores (and reports) and what it refuses: parts
// the model need not see are skipped and listed in IgnoredParts; content it
// would have to see (an image, a content part of an unknown type) is a 400
// naming it. Also the reasoning levels and the loop_guard field, which every
// protocol reads the same way.
#include <gtest/gtest.h>

#include "api/anthropic_request.h"
#include "api/api_error.h"
#include "api/ignored_parts.h"
#include "api/openai_request.h"
#include "api/reasoning_effort.h"
#include "api/responses_request.h"

#include "qwen3_tokenizer.h"

namespace llmesh::api {
namespace {

using nlohmann::json;
using OJson = nlohmann::ordered_json;

using Kinds = std::vector<std::string>;  // what a parser ignored, in the order it met them

// The ApiError `fn` throws (fails the test when it does not).
template <typename Fn>
ApiError error_of(Fn fn) {
  try {
    fn();
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "expected an ApiError";
  return ApiError(0, "", "");
}

TEST(TolerantInput, ResponsesIgnoresUnknownItemsToolsAndFields) {
  // A Codex request with a model name Codex knows: an additional_tools item, hosted tools, client_metadata.
  const ResponsesRequest r = parse_responses_request(json::parse(R"({
      "model": "m", "stream": true, "client_metadata": {"x": 1}, "store": false,
      "input": [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "sys"}]},
                {"type": "additional_tools", "tools": [{"type": "function", "name": "late"}]},
                {"type": "web_search_call", "id": "ws_1"},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
      "tools": [{"type": "function", "name": "exec", "parameters": {"type": "object"}},
                {"type": "web_search"}, {"type": "namespace", "tools": []}]})"));
  EXPECT_EQ(r.messages, json::parse(R"([{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}])"));
  EXPECT_EQ(r.tools.size(), 1u);
  // Fields the server reads (store, stream, input, tools, …) are not listed.
  EXPECT_EQ(r.ignored.kinds(), (Kinds{"input item type 'additional_tools'", "input item type 'web_search_call'",
                                      "tool type 'web_search'", "tool type 'namespace'", "field 'client_metadata'"}));
}

TEST(TolerantInput, ResponsesRefusesContentTheModelMustSee) {
  const ApiError image = error_of([] {
    parse_responses_request(json::parse(R"({"input": [{"role": "user", "content": [
        {"type": "input_text", "text": "what is this?"}, {"type": "input_image", "image_url": "data:,"}]}]})"));
  });
  EXPECT_EQ(image.http_status(), 400);
  EXPECT_EQ(image.param(), "input[0].content[1].type");
  EXPECT_NE(std::string(image.what()).find("input_image"), std::string::npos) << image.what();
  const ApiError unknown = error_of([] {
    parse_responses_request(json::parse(R"({"input": [{"role": "user", "content": [{"type": "hologram"}]}]})"));
  });
  EXPECT_EQ(unknown.param(), "input[0].content[0].type");
  EXPECT_NE(std::string(unknown.what()).find("hologram"), std::string::npos) << unknown.what();
}

TEST(TolerantInput, ChatIgnoresMessageKeysToolsAndFieldsButNotUnknownParts) {
  const ChatCompletionRequest r = parse_chat_completion_request(json::parse(R"({
      "model": "m", "user": "u1", "parallel_tool_calls": true,
      "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}], "cache_control": {"type": "x"}},
                   {"role": "assistant", "content": [{"type": "refusal", "refusal": "no"}], "annotations": []}],
      "tools": [{"type": "function", "function": {"name": "f"}}, {"type": "custom", "custom": {"name": "g"}}]})"));
  EXPECT_EQ(r.messages, json::parse(R"([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "no"}])"));
  EXPECT_EQ(r.tools.size(), 1u);
  EXPECT_EQ(r.ignored.kinds(), (Kinds{"message field 'cache_control'", "message field 'annotations'",
                                      "field 'parallel_tool_calls'", "field 'user'", "tool type 'custom'"}));

  for (const char* type : {"image_url", "input_audio", "file", "video"}) {
    SCOPED_TRACE(type);
    const ApiError e = error_of([&] {
      parse_chat_completion_request(
          {{"messages", {{{"role", "user"}, {"content", {{{"type", "text"}, {"text", "see"}}, {{"type", type}}}}}}}});
    });
    EXPECT_EQ(e.param(), "messages[0].content[1].type");
    EXPECT_NE(std::string(e.what()).find(type), std::string::npos) << e.what();
  }
}

TEST(TolerantInput, AnthropicSkipsRecordBlocksAndReportsFields) {
  const MessagesRequest r = parse_messages_request(OJson::parse(R"({
      "model": "m", "max_tokens": 8, "metadata": {"user_id": "u"}, "context_management": {"edits": []},
      "messages": [
        {"role": "user", "content": [{"type": "text", "text": "search"}]},
        {"role": "assistant", "content": [
          {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}},
          {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []},
          {"type": "redacted_thinking", "data": "xyz"},
          {"type": "text", "text": "found it"}]},
        {"role": "user", "content": [
          {"type": "mcp_tool_result", "tool_use_id": "m1", "content": []},
          {"type": "search_result", "source": "https://x", "title": "T", "content": [{"type": "text", "text": "body"}]},
          {"type": "text", "text": "thanks"}]}]})"),
                                                   MessagesEndpoint::Create);
  EXPECT_EQ(json(r.messages), json::parse(R"([{"role": "user", "content": "search"},
                                              {"role": "assistant", "content": "found it"},
                                              {"role": "user", "content": "T\nhttps://x\nbody\nthanks"}])"));
  EXPECT_EQ(r.ignored.kinds(),
            (Kinds{"content block type 'server_tool_use'", "content block type 'web_search_tool_result'",
                   "content block type 'redacted_thinking'", "content block type 'mcp_tool_result'",
                   "field 'context_management'"}));
}

TEST(TolerantInput, AnthropicRefusesBlocksOfUnknownTypeAndImages) {
  const ApiError unknown = error_of([] {
    parse_messages_request(OJson::parse(R"({"max_tokens": 8, "messages": [{"role": "user", "content": [
        {"type": "text", "text": "x"}, {"type": "hologram", "data": "..."}]}]})"),
                           MessagesEndpoint::Create);
  });
  EXPECT_EQ(unknown.param(), "messages.0.content.1.type");
  EXPECT_NE(std::string(unknown.what()).find("'hologram'"), std::string::npos) << unknown.what();
  const ApiError image = error_of([] {
    parse_messages_request(OJson::parse(R"({"max_tokens": 8, "messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "image", "source": {}}]}]}]})"),
                           MessagesEndpoint::Create);
  });
  EXPECT_EQ(image.param(), "messages.0.content.0.content.0");
}

TEST(TolerantInput, IgnoredKindsAreRecordedOncePerRequestAndMadeHeaderSafe) {
  IgnoredParts ignored;
  ignored.add("/v1/test", "field 'a'");
  ignored.add("/v1/test", "field 'a'");
  ignored.add("/v1/test", "field 'b\xc3\xa9\n'");
  ignored.add("/v1/test", "field '" + std::string(500, 'x') + "'");
  ASSERT_EQ(ignored.kinds().size(), 3u);
  EXPECT_EQ(ignored.kinds()[1], "field 'b?" "??'");  // no forged log lines from client-chosen names
  EXPECT_EQ(ignored.kinds()[2], "field '" + std::string(89, 'x') + "...");
  EXPECT_EQ(header_list_value({"a", "b"}), "a, b");
  const std::string long_value = header_list_value(std::vector<std::string>(2000, "field 'xyz'"));
  EXPECT_EQ(long_value.size(), 4096u);
  EXPECT_TRUE(long_value.ends_with("..."));
}

TEST(ReasoningEffort, LevelsAndBudgetsInEveryProtocol) {
  struct Level {
    const char* name;
    bool thinking;
    std::optional<int64_t> budget;
  };
  const Level levels[] = {{"off", false, std::nullopt},    {"none", false, std::nullopt}, {"minimal", true, 256},
                          {"low", true, 1024},             {"medium", true, 4096},        {"high", true, 16384},
                          {"xhigh", true, std::nullopt}};
  for (const Level& level : levels) {
    SCOPED_TRACE(level.name);
    const ChatCompletionRequest chat = parse_chat_completion_request(
        {{"messages", {{{"role", "user"}, {"content", "x"}}}}, {"reasoning_effort", level.name}});
    EXPECT_EQ(chat.enable_thinking, std::optional<bool>(level.thinking));
    EXPECT_EQ(chat.reasoning_budget_tokens, level.budget);
    const ResponsesRequest responses =
        parse_responses_request({{"input", "x"}, {"reasoning", {{"effort", level.name}}}});
    EXPECT_EQ(responses.enable_thinking, std::optional<bool>(level.thinking));
    EXPECT_EQ(responses.reasoning_budget_tokens, level.budget);
    const MessagesRequest messages = parse_messages_request(
        {{"max_tokens", 8},
         {"messages", {{{"role", "user"}, {"content", "x"}}}},
         {"thinking", {{"type", "adaptive"}}},
         {"output_config", {{"effort", level.name}}}},
        MessagesEndpoint::Create);
    EXPECT_EQ(messages.enable_thinking, level.thinking);
    EXPECT_EQ(messages.reasoning_budget_tokens, level.budget);
  }
  // An explicit enable_thinking decides the switch; the effort still sets the budget.
  const ChatCompletionRequest explicit_off = parse_chat_completion_request(
      {{"messages", {{{"role", "user"}, {"content", "x"}}}}, {"reasoning_effort", "low"}, {"enable_thinking", false}});
  EXPECT_EQ(explicit_off.enable_thinking, std::optional<bool>(false));
  const ApiError bad = error_of([] {
    parse_chat_completion_request({{"messages", {{{"role", "user"}, {"content", "x"}}}}, {"reasoning_effort", "max!"}});
  });
  EXPECT_EQ(bad.param(), "reasoning_effort");
  EXPECT_NE(std::string(bad.what()).find("'max!'"), std::string::npos) << bad.what();
  EXPECT_EQ(error_of([] { parse_chat_completion_request(
                              {{"messages", {{{"role", "user"}, {"content", "x"}}}}, {"reasoning_effort", 3}}); })
                .param(),
            "reasoning_effort");
}

TEST(ReasoningEffort, TheBudgetSitsBetweenTheTemplatesMarkers) {
  const text::Tokenizer* tok = qwen3_tokenizer();
  if (!tok) GTEST_SKIP() << "assets/npm/tokenizer-qwen3 missing (run scripts/fetch_assets.sh)";
  text::OutputParserOptions parser;  // <think> … </think>
  GenerationRequest request;
  request.enable_thinking = true;
  EXPECT_FALSE(reasoning_budget_options(*tok, parser, request).enabled());  // no budget asked for
  request.reasoning_budget_tokens = 12;
  const engine::ReasoningBudgetOptions budget = reasoning_budget_options(*tok, parser, request);
  EXPECT_TRUE(budget.enabled());
  EXPECT_EQ(budget.max_tokens, 12);
  EXPECT_EQ(budget.open_marker, "<think>");
  EXPECT_EQ(budget.close_marker, "</think>");
  EXPECT_EQ(budget.close_ids, std::vector<int32_t>{*tok->token_id("</think>")});  // one special token
  EXPECT_EQ(budget.token_bytes(*tok->token_id("<think>")), "<think>");
  EXPECT_FALSE(budget.starts_in_reasoning);
  parser.starts_in_reasoning = true;
  EXPECT_TRUE(reasoning_budget_options(*tok, parser, request).starts_in_reasoning);
  parser.starts_in_reasoning = false;
  request.enable_thinking = false;  // the template closed an empty block: nothing to budget
  EXPECT_FALSE(reasoning_budget_options(*tok, parser, request).enabled());
  parser.parse_reasoning = false;
  request.enable_thinking = true;
  EXPECT_FALSE(reasoning_budget_options(*tok, parser, request).enabled());
}

TEST(LoopGuardField, BooleansObjectsAndErrors) {
  auto parse = [](json loop_guard) {
    return parse_chat_completion_request({{"messages", {{{"role", "user"}, {"content", "x"}}}}, {"loop_guard", loop_guard}})
        .params.loop_guard;
  };
  EXPECT_EQ(parse(false).enabled, std::optional<bool>(false));
  EXPECT_EQ(parse(true).enabled, std::optional<bool>(true));
  EXPECT_FALSE(parse(true).window_tokens.has_value());
  const LoopGuardRequest tuned = parse({{"tokens", 64}, {"max_period", 8}});
  EXPECT_EQ(tuned.enabled, std::optional<bool>(true));
  EXPECT_EQ(tuned.window_tokens, std::optional<int64_t>(64));
  EXPECT_EQ(tuned.max_period, std::optional<int32_t>(8));
  EXPECT_FALSE(parse_chat_completion_request({{"messages", {{{"role", "user"}, {"content", "x"}}}}})
                   .params.loop_guard.enabled.has_value());
  auto param_of = [&](json loop_guard) { return error_of([&] { parse(loop_guard); }).param(); };
  EXPECT_EQ(param_of("yes"), "loop_guard");
  EXPECT_EQ(param_of({{"window", 3}}), "loop_guard");
  EXPECT_EQ(param_of({{"tokens", 1}}), "loop_guard.tokens");
  EXPECT_EQ(param_of({{"max_period", 0}}), "loop_guard.max_period");
  EXPECT_EQ(param_of({{"max_period", "8"}}), "loop_guard.max_period");
  // The same field in the other protocols.
  EXPECT_EQ(parse_responses_request({{"input", "x"}, {"loop_guard", false}}).params.loop_guard.enabled,
            std::optional<bool>(false));
  EXPECT_EQ(parse_messages_request(
                {{"max_tokens", 8}, {"messages", {{{"role", "user"}, {"content", "x"}}}}, {"loop_guard", false}},
                MessagesEndpoint::Create)
                .params.loop_guard.enabled,
            std::optional<bool>(false));
}

}  // namespace
}  // namespace llmesh::api
