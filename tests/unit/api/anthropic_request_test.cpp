// Anthropic Messages bodies -> chat-template messages, and the prompts they
// render to with the real Qwen3 template (tests/golden/templates/qwen3.jinja).
#include <gtest/gtest.h>

#include "api/anthropic_error.h"
#include "api/anthropic_prompt.h"
#include "api/anthropic_request.h"
#include "api/api_error.h"

#include "golden_templates.h"

namespace llmesh::api {
namespace {

using OJson = nlohmann::ordered_json;

OJson body_of(const char* text) { return OJson::parse(text); }

MessagesRequest parse(const OJson& body, MessagesEndpoint endpoint = MessagesEndpoint::Create) {
  return parse_messages_request(body, endpoint);
}

// The ApiError a body raises (fails the test when it parses).
ApiError parse_error(const OJson& body, MessagesEndpoint endpoint = MessagesEndpoint::Create) {
  try {
    parse_messages_request(body, endpoint);
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "expected an ApiError for " << body.dump();
  return ApiError(0, "", "");
}

std::string render(const OJson& body, MessagesEndpoint endpoint = MessagesEndpoint::Create) {
  return render_messages_prompt(qwen3_template(), parse(body, endpoint));
}

size_t common_prefix(const std::string& a, const std::string& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

TEST(AnthropicRequest, SystemBlocksDropTheBillingHeader) {
  const auto r = parse(body_of(R"({"model": "claude-sonnet-4-5", "max_tokens": 64,
    "system": [{"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.0.abc; cc_entrypoint=cli;"},
               {"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}},
               {"type": "text", "text": "Be brief."}],
    "messages": [{"role": "user", "content": "hi"}]})"));
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[0]["role"], "system");
  EXPECT_EQ(r.messages[0]["content"], "You are Claude Code.\nBe brief.");
  EXPECT_EQ(r.num_dropped_system_blocks, 1);
  EXPECT_EQ(r.messages[1], OJson({{"role", "user"}, {"content", "hi"}}));
  EXPECT_EQ(r.params.model, "claude-sonnet-4-5");
  EXPECT_EQ(*r.params.max_tokens, 64);
}

TEST(AnthropicRequest, ConversationsDifferingOnlyInBillingHeaderShareThePrompt) {
  auto body = [](const char* billing, const char* question) {
    OJson b = body_of(R"({"max_tokens": 8, "system": [{"type": "text", "text": ""}, {"type": "text", "text": "Sys"}],
      "tools": [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}],
      "messages": [{"role": "user", "content": ""}]})");
    b["system"][0]["text"] = billing;
    b["messages"][0]["content"] = question;
    return b;
  };
  const std::string a = render(body("x-anthropic-billing-header: cc_version=1; cch=aaaa;", "first question"));
  const std::string b = render(body("x-anthropic-billing-header: cc_version=1; cch=bbbb;", "other question"));
  const size_t tools_end = a.find("</tools>");
  ASSERT_NE(tools_end, std::string::npos);
  EXPECT_GT(common_prefix(a, b), tools_end) << "the system+tools prefix must be shared";
  EXPECT_EQ(a.find("billing"), std::string::npos);
}

TEST(AnthropicRequest, SystemRoleInsideMessagesRendersInPlace) {
  const std::string prompt = render(body_of(R"({"max_tokens": 8, "system": "Top",
    "messages": [{"role": "user", "content": [{"type": "text", "text": "<system-reminder>r</system-reminder>"},
                                               {"type": "text", "text": "question"}]},
                 {"role": "system", "content": "Mid-conversation instructions"},
                 {"role": "user", "content": "again"}]})"));
  const size_t question = prompt.find("<system-reminder>r</system-reminder>\nquestion");
  const size_t mid = prompt.find("<|im_start|>system\nMid-conversation instructions<|im_end|>");
  const size_t again = prompt.find("<|im_start|>user\nagain");
  ASSERT_NE(question, std::string::npos) << prompt;
  ASSERT_NE(mid, std::string::npos) << prompt;
  ASSERT_NE(again, std::string::npos) << prompt;
  EXPECT_LT(question, mid);
  EXPECT_LT(mid, again);
  EXPECT_EQ(prompt.rfind("<|im_start|>system\nTop<|im_end|>", 0), 0u) << prompt;
}

TEST(AnthropicRequest, ToolUseAndToolResultMapToToolCallsAndToolMessages) {
  const auto r = parse(body_of(R"({"max_tokens": 8,
    "tools": [{"name": "Read", "input_schema": {"type": "object"}}],
    "messages": [
      {"role": "user", "content": "read it"},
      {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "I should read.", "signature": "sig"},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"zeta": 1, "alpha": "x"}}]},
      {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "line 1"},
                                                                      {"type": "text", "text": "line 2"}]},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "boom", "is_error": true},
        {"type": "text", "text": "continue"}]}]})"));
  ASSERT_EQ(r.messages.size(), 5u) << r.messages.dump();
  const OJson& assistant = r.messages[1];
  EXPECT_EQ(assistant["content"], "Reading.");
  EXPECT_EQ(assistant["reasoning_content"], "I should read.");
  ASSERT_EQ(assistant["tool_calls"].size(), 1u);
  EXPECT_EQ(assistant["tool_calls"][0]["id"], "toolu_1");
  EXPECT_EQ(assistant["tool_calls"][0]["function"]["name"], "Read");
  EXPECT_EQ(assistant["tool_calls"][0]["function"]["arguments"].dump(), R"({"zeta":1,"alpha":"x"})");
  EXPECT_EQ(r.messages[2]["role"], "tool");
  EXPECT_EQ(r.messages[2]["tool_call_id"], "toolu_1");
  EXPECT_EQ(r.messages[2]["name"], "Read");
  EXPECT_EQ(r.messages[2]["content"], "line 1\nline 2");
  EXPECT_EQ(r.messages[3]["content"], "Error: boom");
  EXPECT_EQ(r.messages[4], OJson({{"role", "user"}, {"content", "continue"}}));

  const std::string prompt = render_messages_prompt(qwen3_template(), r);
  EXPECT_NE(prompt.find(R"(<tool_call>
{"name": "Read", "arguments": {"zeta": 1, "alpha": "x"}}
</tool_call>)"),
            std::string::npos)
      << prompt;
  EXPECT_NE(prompt.find("<tool_response>\nline 1\nline 2\n</tool_response>"), std::string::npos) << prompt;
}

TEST(AnthropicRequest, ToolsKeepTheirSchemaKeyOrderAndServerToolsAreSkipped) {
  const auto r = parse(body_of(R"({"max_tokens": 8, "messages": [{"role": "user", "content": "x"}],
    "tools": [{"name": "Edit", "description": "edit a file", "cache_control": {"type": "ephemeral"},
               "input_schema": {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                                "properties": {"zeta": {"type": "string"}, "alpha": {"anyOf": [{"const": 1}, {"type": "null"}]}},
                                "required": ["zeta"], "additionalProperties": false}},
              {"type": "web_search_20250305", "name": "web_search"}]})"));
  ASSERT_EQ(r.tools.size(), 1u);
  EXPECT_EQ(r.tools[0]["type"], "function");
  EXPECT_EQ(r.tools[0]["function"]["name"], "Edit");
  EXPECT_EQ(r.tools[0]["function"]["description"], "edit a file");
  const std::string prompt = render_messages_prompt(qwen3_template(), r);
  EXPECT_LT(prompt.find("\"zeta\""), prompt.find("\"alpha\"")) << prompt;
  EXPECT_EQ(prompt.find("web_search"), std::string::npos);
}

TEST(AnthropicRequest, ThinkingSwitch) {
  EXPECT_TRUE(resolve_thinking("enabled", ""));
  EXPECT_TRUE(resolve_thinking("adaptive", "high"));
  EXPECT_TRUE(resolve_thinking("adaptive", "low"));  // low is a budget now, not off
  EXPECT_FALSE(resolve_thinking("adaptive", "off"));
  EXPECT_FALSE(resolve_thinking("adaptive", "none"));
  EXPECT_FALSE(resolve_thinking("disabled", "high"));
  EXPECT_FALSE(resolve_thinking("", "high"));

  OJson body = body_of(R"({"max_tokens": 8, "messages": [{"role": "user", "content": "x"}]})");
  EXPECT_FALSE(parse(body).enable_thinking);
  const std::string off = render(body);
  EXPECT_TRUE(off.ends_with("<|im_start|>assistant\n<think>\n\n</think>\n\n")) << off;

  body["thinking"] = {{"type", "enabled"}, {"budget_tokens", 31999}};
  const auto enabled = parse(body);
  EXPECT_TRUE(enabled.enable_thinking);
  EXPECT_EQ(*enabled.thinking_budget_tokens, 31999);
  EXPECT_TRUE(render(body).ends_with("<|im_start|>assistant\n"));

  body["thinking"] = {{"type", "adaptive"}};
  body["output_config"] = {{"effort", "off"}};
  EXPECT_FALSE(parse(body).enable_thinking);
  body["output_config"] = {{"effort", "high"}};
  EXPECT_TRUE(parse(body).enable_thinking);
}

TEST(AnthropicRequest, ThinkingBudgetFromBudgetTokensOrEffort) {
  OJson body = body_of(R"({"max_tokens": 8, "messages": [{"role": "user", "content": "x"}]})");
  EXPECT_FALSE(parse(body).reasoning_budget_tokens.has_value());
  body["thinking"] = {{"type", "enabled"}, {"budget_tokens", 2000}};
  EXPECT_EQ(parse(body).reasoning_budget_tokens, std::optional<int64_t>(2000));
  body["output_config"] = {{"effort", "low"}};  // an explicit budget_tokens wins
  EXPECT_EQ(parse(body).reasoning_budget_tokens, std::optional<int64_t>(2000));
  body["thinking"] = {{"type", "adaptive"}};
  EXPECT_EQ(parse(body).reasoning_budget_tokens, std::optional<int64_t>(1024));
  body["output_config"] = {{"effort", "minimal"}};
  EXPECT_EQ(parse(body).reasoning_budget_tokens, std::optional<int64_t>(256));
  body["output_config"] = {{"effort", "xhigh"}};
  EXPECT_TRUE(parse(body).enable_thinking);
  EXPECT_FALSE(parse(body).reasoning_budget_tokens.has_value());
  body["thinking"] = {{"type", "disabled"}};
  body["output_config"] = {{"effort", "high"}};
  EXPECT_FALSE(parse(body).reasoning_budget_tokens.has_value());  // no thinking, no budget
  body["output_config"] = {{"effort", "extreme"}};
  try {
    parse(body);
    ADD_FAILURE() << "an unknown effort parsed";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param(), "output_config.effort");
    EXPECT_NE(std::string(e.what()).find("'extreme'"), std::string::npos) << e.what();
  }
}

TEST(AnthropicRequest, FinalAssistantTurnIsAPrefill) {
  const auto r = parse(body_of(R"({"max_tokens": 8, "messages": [
      {"role": "user", "content": "Answer in JSON"}, {"role": "assistant", "content": [{"type": "text", "text": "{\"a\":"}]}]})"));
  EXPECT_EQ(r.assistant_prefill, "{\"a\":");
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_TRUE(
      render_messages_prompt(qwen3_template(), r).ends_with("<|im_start|>assistant\n<think>\n\n</think>\n\n{\"a\":"));
}

TEST(AnthropicRequest, EachTurnIsAPrefixOfTheNext) {
  // Claude Code's loop: the cache_control marker moves to the newest block; everything else repeats verbatim.
  OJson turn1 = body_of(R"({"max_tokens": 8, "system": [{"type": "text", "text": "Sys"}],
    "tools": [{"name": "Bash", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}],
    "messages": [{"role": "user", "content": [{"type": "text", "text": "list files", "cache_control": {"type": "ephemeral"}}]},
                 {"role": "system", "content": "reminder"}]})");
  OJson turn2 = turn1;
  turn2["messages"][0]["content"][0].erase("cache_control");
  turn2["messages"].push_back(body_of(R"({"role": "assistant", "content": [
      {"type": "tool_use", "id": "toolu_a", "name": "Bash", "input": {"command": "ls"}}]})"));
  turn2["messages"].push_back(body_of(R"({"role": "user", "content": [
      {"type": "tool_result", "tool_use_id": "toolu_a", "content": "a.txt", "cache_control": {"type": "ephemeral"}}]})"));
  const std::string p1 = render(turn1);
  const std::string p2 = render(turn2);
  // Only the generation prompt's empty think block (what the model "wrote") differs.
  const std::string generation_prompt = "<|im_start|>assistant\n<think>\n\n</think>\n\n";
  ASSERT_TRUE(p1.ends_with(generation_prompt));
  EXPECT_GE(common_prefix(p1, p2),
            p1.size() - generation_prompt.size() + std::string("<|im_start|>assistant\n").size());
}

TEST(AnthropicRequest, EchoedThinkingKeepsTheToolLoopAPrefix) {
  // With thinking on, Qwen3 generates "<think>\nR\n</think>\n\nC" after "<|im_start|>assistant\n";
  // the echoed thinking block renders back to exactly that, so the whole previous prompt is reused.
  OJson turn1 = body_of(R"({"max_tokens": 8, "thinking": {"type": "adaptive"}, "output_config": {"effort": "high"},
    "tools": [{"name": "Bash", "input_schema": {"type": "object"}}],
    "messages": [{"role": "user", "content": "list files"}]})");
  OJson turn2 = turn1;
  turn2["messages"].push_back(body_of(R"({"role": "assistant", "content": [
      {"type": "thinking", "thinking": "I will run ls.", "signature": "llmesh-thinking-0"},
      {"type": "text", "text": "Listing."},
      {"type": "tool_use", "id": "toolu_a", "name": "Bash", "input": {"command": "ls"}}]})"));
  turn2["messages"].push_back(body_of(R"({"role": "user", "content": [
      {"type": "tool_result", "tool_use_id": "toolu_a", "content": "a.txt"}]})"));
  const std::string p1 = render(turn1);
  const std::string p2 = render(turn2);
  ASSERT_TRUE(p1.ends_with("<|im_start|>assistant\n")) << p1;
  EXPECT_TRUE(p2.starts_with(p1)) << "diverges at byte " << common_prefix(p1, p2);
  EXPECT_NE(p2.find("<think>\nI will run ls.\n</think>\n\nListing.\n<tool_call>"), std::string::npos) << p2;
}

TEST(AnthropicRequest, DocumentsBecomeText) {
  const auto r = parse(body_of(R"({"max_tokens": 8, "messages": [{"role": "user", "content": [
      {"type": "document", "title": "Notes", "source": {"type": "text", "media_type": "text/plain", "data": "body"}},
      {"type": "text", "text": "summarize"}]}]})"));
  EXPECT_EQ(r.messages[0]["content"], "Notes\nbody\nsummarize");
}

TEST(AnthropicRequest, CountTokensNeedsNoMaxTokens) {
  const OJson body = body_of(R"({"model": "m", "messages": [{"role": "user", "content": "x"}]})");
  EXPECT_NO_THROW(parse(body, MessagesEndpoint::CountTokens));
  const ApiError e = parse_error(body);
  EXPECT_EQ(e.http_status(), 400);
  EXPECT_NE(std::string(e.what()).find("max_tokens"), std::string::npos);
}

TEST(AnthropicRequest, ToolChoice) {
  OJson body = body_of(R"({"max_tokens": 8, "messages": [{"role": "user", "content": "x"}],
    "tools": [{"name": "Bash", "input_schema": {"type": "object"}}]})");
  EXPECT_EQ(parse(body).tool_choice, ToolChoiceMode::Auto);
  body["tool_choice"] = {{"type", "any"}};
  EXPECT_EQ(parse(body).tool_choice, ToolChoiceMode::Any);
  body["tool_choice"] = {{"type", "tool"}, {"name", "Bash"}, {"disable_parallel_tool_use", true}};
  const auto forced = parse(body);
  EXPECT_EQ(forced.tool_choice, ToolChoiceMode::Tool);
  EXPECT_EQ(forced.forced_tool_name, "Bash");
  body["tool_choice"] = {{"type", "none"}};
  EXPECT_EQ(parse(body).tool_choice, ToolChoiceMode::None);
  body["tool_choice"] = {{"type", "tool"}, {"name", "Missing"}};
  EXPECT_NE(std::string(parse_error(body).what()).find("Missing"), std::string::npos);
  body["tool_choice"] = {{"type", "sometimes"}};
  EXPECT_EQ(parse_error(body).http_status(), 400);
  body.erase("tools");
  body["tool_choice"] = {{"type", "any"}};
  EXPECT_EQ(parse_error(body).http_status(), 400);
}

TEST(AnthropicRequest, StructuredOutputSchema) {
  OJson body = body_of(R"({"max_tokens": 8, "messages": [{"role": "user", "content": "x"}],
    "output_config": {"format": {"type": "json_schema", "schema": {"type": "object", "properties": {"title": {"type": "string"}}}}}})");
  const auto r = parse(body);
  EXPECT_EQ(r.output_schema["properties"]["title"]["type"], "string");
  body["output_config"]["format"]["type"] = "xml";
  EXPECT_EQ(parse_error(body).http_status(), 400);
}

TEST(AnthropicRequest, SamplingFieldsAndStopSequences) {
  const auto r = parse(body_of(R"({"max_tokens": 64000, "temperature": 0.5, "top_p": 0.9, "top_k": 40,
    "stop_sequences": ["END", ""], "stream": true, "metadata": {"user_id": "{\"session\":1}"},
    "context_management": {"edits": []}, "unknown_key": 1,
    "messages": [{"role": "user", "content": "x"}]})"));
  EXPECT_EQ(*r.params.max_tokens, 64000);
  EXPECT_FLOAT_EQ(*r.params.temperature, 0.5f);
  EXPECT_FLOAT_EQ(*r.params.top_p, 0.9f);
  EXPECT_EQ(*r.params.top_k, 40);
  EXPECT_EQ(r.params.stop, std::vector<std::string>{"END"});
  EXPECT_TRUE(r.params.stream);
}

TEST(AnthropicRequest, MalformedBodiesNameTheField) {
  struct Case {
    const char* body;
    const char* field;
  };
  const Case cases[] = {
      {R"({"max_tokens": 8})", "messages"},
      {R"({"max_tokens": 8, "messages": {}})", "messages"},
      {R"({"max_tokens": 8, "messages": []})", "messages"},
      {R"({"max_tokens": 0, "messages": [{"role": "user", "content": "x"}]})", "max_tokens"},
      {R"({"max_tokens": "8", "messages": [{"role": "user", "content": "x"}]})", "max_tokens"},
      {R"({"max_tokens": 8, "messages": [{"role": "robot", "content": "x"}]})", "messages.0.role"},
      {R"({"max_tokens": 8, "messages": [{"role": "user", "content": 5}]})", "messages.0.content"},
      {R"({"max_tokens": 8, "messages": [{"role": "user"}]})", "messages.0.content"},
      {R"({"max_tokens": 8, "messages": [{"role": "user", "content": [{"text": "x"}]}]})", "messages.0.content.0.type"},
      {R"({"max_tokens": 8, "messages": [{"role": "user", "content": [{"type": "text"}]}]})",
       "messages.0.content.0.text"},
      {R"({"max_tokens": 8, "messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}]})",
       "messages.0.content.0"},
      {R"({"max_tokens": 8, "messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "b", "input": []}]}]})",
       "messages.0.content.0.input"},
      {R"({"max_tokens": 8, "temperature": 3, "messages": [{"role": "user", "content": "x"}]})", "temperature"},
      {R"({"max_tokens": 8, "system": 7, "messages": [{"role": "user", "content": "x"}]})", "system"},
      {R"({"max_tokens": 8, "tools": [{"name": "a"}], "messages": [{"role": "user", "content": "x"}]})",
       "tools.0.input_schema"},
      {R"({"max_tokens": 8, "thinking": {"type": "enabled"}, "messages": [{"role": "user", "content": "x"}]})",
       "thinking.budget_tokens"},
      {R"({"max_tokens": 8, "stop_sequences": "x", "messages": [{"role": "user", "content": "x"}]})", "stop_sequences"},
  };
  for (const auto& c : cases) {
    const ApiError e = parse_error(body_of(c.body));
    EXPECT_EQ(e.http_status(), 400) << c.body;
    EXPECT_EQ(e.param(), c.field) << c.body << " -> " << e.what();
  }
  const ApiError image = parse_error(
      body_of(R"({"max_tokens": 8, "messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}]})"));
  EXPECT_NE(std::string(image.what()).find("vision"), std::string::npos);
}

TEST(AnthropicRequest, BodyMustBeAJsonObject) {
  EXPECT_THROW(parse_ordered_json_body("{"), ApiError);
  EXPECT_THROW(parse_ordered_json_body("[1]"), ApiError);
  EXPECT_EQ(parse_ordered_json_body(R"({"b": 1, "a": 2})").dump(), R"({"b":1,"a":2})");
}

TEST(AnthropicError, ShapeAndPaths) {
  const auto body = anthropic_error_body(401, "bad key");
  EXPECT_EQ(body["type"], "error");
  EXPECT_EQ(body["error"]["type"], "authentication_error");
  EXPECT_EQ(body["error"]["message"], "bad key");
  EXPECT_EQ(anthropic_error_type(400), "invalid_request_error");
  EXPECT_EQ(anthropic_error_type(404), "not_found_error");
  EXPECT_EQ(anthropic_error_type(413), "request_too_large");
  EXPECT_EQ(anthropic_error_type(429), "rate_limit_error");
  EXPECT_EQ(anthropic_error_type(503), "overloaded_error");
  EXPECT_EQ(anthropic_error_type(500), "api_error");
  EXPECT_TRUE(is_anthropic_path("/v1/messages"));
  EXPECT_TRUE(is_anthropic_path("/v1/messages/count_tokens"));
  EXPECT_TRUE(is_anthropic_path("/v1/messages/nope"));
  EXPECT_FALSE(is_anthropic_path("/v1/messagesx"));
  EXPECT_FALSE(is_anthropic_path("/v1/chat/completions"));
}

}  // namespace
}  // namespace llmesh::api
