// The three protocols' translations into the one GenerationRequest: the same
// conversation, sampling, constraint and reasoning switch sent as an OpenAI
// chat completion, a Responses request and an Anthropic Messages request
// normalize to the same request, and render to the same prompt with the real
// Qwen3 template (tests/golden/templates/qwen3.jinja).
#include <gtest/gtest.h>

#include "api/anthropic_prompt.h"
#include "api/anthropic_request.h"
#include "api/api_error.h"
#include "api/generation_pipeline.h"
#include "api/openai_chat.h"
#include "api/openai_request.h"
#include "api/openai_responses.h"
#include "api/responses_request.h"

#include "golden_templates.h"
#include "request_from_json.h"

namespace llmesh::api {

using text::ChatTemplate;
using text::OutputParserOptions;

namespace {

using json = nlohmann::json;
using OJson = nlohmann::ordered_json;

using test::from_chat;
using test::from_messages;
using test::from_responses;

struct Normalized {
  const char* protocol;
  GenerationRequest request;
};

// The same request in the three wire formats.
std::vector<Normalized> all_three(const std::string& chat, const std::string& responses, const std::string& messages) {
  return {{"chat", from_chat(chat)}, {"responses", from_responses(responses)}, {"messages", from_messages(messages)}};
}

// Compared with keys sorted: the chat and Responses parsers sort keys, Anthropic's keeps the client's order.
json sorted(const OJson& value) { return json(value); }

// tool name -> its arguments schema, whatever shape the protocol's tools have.
json tool_schemas(const OJson& tools) {
  json out = json::object();
  for (const auto& tool : tools) {
    const OJson& function = tool.contains("function") ? tool["function"] : tool;
    for (const char* key : {"parameters", "input_schema"})
      if (function.contains(key)) out[function["name"].get<std::string>()] = json(function[key]);
  }
  return out;
}

TEST(GenerationRequest, TheSameConversationNormalizesTheSameInEveryProtocol) {
  const auto requests = all_three(
      R"({"model": "m", "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
          "temperature": 0.5, "top_p": 0.9, "top_k": 20, "max_tokens": 64, "stream": true})",
      R"({"model": "m", "instructions": "Be brief.", "input": "Hi",
          "temperature": 0.5, "top_p": 0.9, "top_k": 20, "max_output_tokens": 64, "stream": true})",
      R"({"model": "m", "system": "Be brief.", "messages": [{"role": "user", "content": "Hi"}],
          "temperature": 0.5, "top_p": 0.9, "top_k": 20, "max_tokens": 64, "stream": true})");
  const GenerationRequest& chat = requests[0].request;
  const std::string prompt = render_prompt(qwen3_template(), chat);
  for (const auto& [protocol, r] : requests) {
    SCOPED_TRACE(protocol);
    EXPECT_EQ(sorted(r.messages), sorted(chat.messages));
    EXPECT_EQ(sorted(r.messages), json::parse(R"([{"role": "system", "content": "Be brief."},
                                                  {"role": "user", "content": "Hi"}])"));
    EXPECT_TRUE(r.tools.empty());
    EXPECT_EQ(r.assistant_prefill, "");
    EXPECT_EQ(r.params.model, "m");
    EXPECT_EQ(r.params.temperature, 0.5f);
    EXPECT_EQ(r.params.top_p, 0.9f);
    EXPECT_EQ(r.params.top_k, 20);
    EXPECT_EQ(r.params.max_tokens, 64);
    EXPECT_TRUE(r.params.stream);
    EXPECT_EQ(r.constraint.kind, ConstraintSpec::Kind::None);
    EXPECT_FALSE(r.parse_tool_calls);
    EXPECT_EQ(render_prompt(qwen3_template(), r), prompt);
  }
}

TEST(GenerationRequest, EnableThinkingHasOneDefault) {
  const auto requests = all_three(R"({"messages": [{"role": "user", "content": "Hi"}]})", R"({"input": "Hi"})",
                                  R"({"max_tokens": 8, "messages": [{"role": "user", "content": "Hi"}]})");
  for (const auto& [protocol, r] : requests) {
    SCOPED_TRACE(protocol);
    EXPECT_EQ(r.enable_thinking, kDefaultEnableThinking);
    EXPECT_FALSE(r.enable_thinking);
    // Always passed explicitly, so the template's own default never decides.
    EXPECT_EQ(template_options(r).enable_thinking, std::optional<bool>(kDefaultEnableThinking));
    EXPECT_TRUE(render_prompt(qwen3_template(), r).ends_with("<|im_start|>assistant\n<think>\n\n</think>\n\n"));
  }
}

TEST(GenerationRequest, EachProtocolsReasoningSwitch) {
  const auto on = all_three(
      R"({"messages": [{"role": "user", "content": "Hi"}], "chat_template_kwargs": {"enable_thinking": true}})",
      R"({"input": "Hi", "reasoning": {"effort": "high"}})",
      R"({"max_tokens": 8, "messages": [{"role": "user", "content": "Hi"}],
          "thinking": {"type": "enabled", "budget_tokens": 1024}})");
  for (const auto& [protocol, r] : on) {
    SCOPED_TRACE(protocol);
    EXPECT_TRUE(r.enable_thinking);
    EXPECT_FALSE(r.template_kwargs.contains("enable_thinking"));
    EXPECT_TRUE(render_prompt(qwen3_template(), r).ends_with("<|im_start|>assistant\n"));
  }
  const auto off = all_three(R"({"messages": [{"role": "user", "content": "Hi"}], "enable_thinking": false})",
                             R"({"input": "Hi", "reasoning": {"effort": "none"}})",
                             R"({"max_tokens": 8, "messages": [{"role": "user", "content": "Hi"}],
                                 "thinking": {"type": "disabled"}})");
  for (const auto& [protocol, r] : off) {
    SCOPED_TRACE(protocol);
    EXPECT_FALSE(r.enable_thinking);
  }
  // Other chat_template_kwargs reach the template; the switch itself travels apart from them.
  const GenerationRequest kwargs = from_chat(R"({"messages": [{"role": "user", "content": "Hi"}],
                    "chat_template_kwargs": {"enable_thinking": true, "date_string": "today"}})");
  EXPECT_EQ(kwargs.template_kwargs, json::parse(R"({"date_string": "today"})"));
}

TEST(GenerationRequest, AJsonSchemaKeepsTheClientsKeyOrder) {
  const std::string schema =
      R"({"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "integer"}},
                                 "required": ["zeta", "alpha"]})";
  const auto requests = all_three(
      R"({"messages": [{"role": "user", "content": "Hi"}],
          "response_format": {"type": "json_schema", "json_schema": {"name": "p", "schema": )" +
          schema + "}}}",
      R"({"input": "Hi", "text": {"format": {"type": "json_schema", "name": "p", "schema": )" + schema + "}}}",
      R"({"max_tokens": 8, "messages": [{"role": "user", "content": "Hi"}],
          "output_config": {"format": {"type": "json_schema", "schema": )" +
          schema + "}}}");
  const char* params[] = {"response_format", "text.format.schema", "output_config.format"};
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto& [protocol, r] = requests[i];
    SCOPED_TRACE(protocol);
    EXPECT_EQ(r.constraint.kind, ConstraintSpec::Kind::JsonSchema);
    EXPECT_EQ(r.constraint.schema.dump(), OJson::parse(schema).dump());
    EXPECT_LT(r.constraint.schema.dump().find("zeta"), r.constraint.schema.dump().find("alpha"));
    EXPECT_EQ(r.constraint.param, params[i]);
  }
  EXPECT_EQ(
      from_chat(R"({"messages": [{"role": "user", "content": "Hi"}], "response_format": {"type": "json_object"}})")
          .constraint.schema,
      OJson::parse(R"({"type": "object"})"));
}

TEST(GenerationRequest, AForcedToolCall) {
  const std::string parameters = R"({"type": "object", "properties": {"city": {"type": "string"}}})";
  const auto requests = all_three(
      R"({"messages": [{"role": "user", "content": "Weather?"}], "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
          "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather", "parameters": )" +
          parameters + "}}, {\"type\": \"custom\", \"custom\": {\"name\": \"grep\"}}]}",
      R"({"input": "Weather?", "tool_choice": {"type": "function", "name": "get_weather"},
          "tools": [{"type": "function", "name": "get_weather", "description": "Weather", "parameters": )" +
          parameters + "}, {\"type\": \"web_search\"}]}",
      R"({"max_tokens": 8, "messages": [{"role": "user", "content": "Weather?"}], "tool_choice": {"type": "tool", "name": "get_weather"},
          "tools": [{"name": "get_weather", "description": "Weather", "input_schema": )" +
          parameters + "}]}");
  const json chat_tools = sorted(requests[0].request.tools);
  for (const auto& [protocol, r] : requests) {
    SCOPED_TRACE(protocol);
    EXPECT_EQ(sorted(r.tools), chat_tools);  // what the template shows
    EXPECT_TRUE(r.parse_tool_calls);
    EXPECT_EQ(r.constraint.kind, ConstraintSpec::Kind::ToolCall);
    EXPECT_EQ(r.constraint.forced_tool_name, "get_weather");
    EXPECT_EQ(tool_schemas(r.constraint.tools), json({{"get_weather", json::parse(parameters)}}));
    EXPECT_EQ(r.constraint.tools.size(), 1u);  // custom and hosted tools are not offered to the grammar
  }
  // tool_choice none: the tools are shown but calls are not parsed.
  const auto none = all_three(
      R"({"messages": [{"role": "user", "content": "x"}], "tool_choice": "none",
          "tools": [{"type": "function", "function": {"name": "f"}}]})",
      R"({"input": "x", "tool_choice": "none", "tools": [{"type": "function", "name": "f"}]})",
      R"({"max_tokens": 8, "messages": [{"role": "user", "content": "x"}], "tool_choice": {"type": "none"},
          "tools": [{"name": "f", "input_schema": {"type": "object"}}]})");
  for (const auto& [protocol, r] : none) {
    SCOPED_TRACE(protocol);
    EXPECT_FALSE(r.parse_tool_calls);
    EXPECT_EQ(r.constraint.kind, ConstraintSpec::Kind::None);
  }
}

TEST(GenerationRequest, OutputLimitPolicies) {
  const auto requests = all_three(R"({"messages": [{"role": "user", "content": "Hi"}]})", R"({"input": "Hi"})",
                                  R"({"max_tokens": 8, "messages": [{"role": "user", "content": "Hi"}]})");
  EXPECT_EQ(requests[0].request.output_limit.kind, OutputLimitPolicy::Kind::Reject);
  EXPECT_EQ(requests[0].request.output_limit.param, "max_tokens");
  EXPECT_EQ(requests[0].request.output_limit.input_name, "prompt");
  EXPECT_EQ(requests[1].request.output_limit.kind, OutputLimitPolicy::Kind::Reject);
  EXPECT_EQ(requests[1].request.output_limit.param, "max_output_tokens");
  EXPECT_EQ(requests[1].request.output_limit.input_name, "input");
  EXPECT_EQ(requests[2].request.output_limit.kind, OutputLimitPolicy::Kind::Clamp);
  EXPECT_FALSE(requests[0].request.params.max_tokens.has_value());
  EXPECT_FALSE(requests[1].request.params.max_tokens.has_value());
  EXPECT_EQ(requests[2].request.params.max_tokens, 8);
}

TEST(GenerationRequest, StopStringsAndPrefill) {
  const GenerationRequest chat =
      from_chat(R"({"messages": [{"role": "user", "content": "x"}], "stop": ["END", "\n\n"]})");
  const GenerationRequest messages = from_messages(
      R"({"max_tokens": 8, "stop_sequences": ["END", "\n\n"], "messages": [{"role": "user", "content": "x"},
          {"role": "assistant", "content": "{\"a\":"}]})");
  EXPECT_EQ(chat.params.stop, messages.params.stop);
  EXPECT_EQ(messages.assistant_prefill, "{\"a\":");
  EXPECT_TRUE(render_prompt(qwen3_template(), messages).ends_with("</think>\n\n{\"a\":"));
}

TEST(GenerationRequest, ReasoningPrefixFollowsThePromptAndTheSwitch) {
  OutputParserOptions parser;
  parser.parse_reasoning = true;
  EXPECT_TRUE(reasoning_prefix(parser, true).allow_reasoning);
  EXPECT_FALSE(reasoning_prefix(parser, false).allow_reasoning);
  parser.starts_in_reasoning = true;  // the prompt opened <think>: the model finishes it first, switch or not
  EXPECT_TRUE(reasoning_prefix(parser, false).starts_in_reasoning);
  EXPECT_FALSE(reasoning_prefix(parser, true).allow_reasoning);
  parser = OutputParserOptions{};
  parser.parse_reasoning = false;  // a model without reasoning markers
  EXPECT_FALSE(reasoning_prefix(parser, true).allow_reasoning);
}

TEST(GenerationRequest, TemplateErrorsInEachStyle) {
  const ChatTemplate failing("{{ raise_exception('no') }}", "", "");
  GenerationRequest r = from_chat(R"({"messages": [{"role": "user", "content": "x"}]})");
  try {
    render_prompt(failing, r);
    ADD_FAILURE() << "no error";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param(), "messages");
    EXPECT_TRUE(std::string(e.what()).starts_with("the chat template failed: ")) << e.what();
  }
  r.error_style = ErrorStyle::Anthropic;
  try {
    render_prompt(failing, r);
    ADD_FAILURE() << "no error";
  } catch (const ApiError& e) {
    EXPECT_TRUE(std::string(e.what()).starts_with("messages: the chat template failed: ")) << e.what();
  }
}

}  // namespace
}  // namespace llmesh::api
