// The one request every generating endpoint makes of the server, whatever
// protocol it came in. Each endpoint only translates its wire format into a
// GenerationRequest (to_generation_request below, in generation_request.cpp)
// and the outputs back into its wire format; rendering,
// tokenization, the output limit, the token constraint and submission happen
// once, in generation_pipeline.h.
//
//   field              chat completions                 Responses                     Anthropic Messages
//   messages, tools    messages, tools                  input items, function tools   content blocks, tools
//   enable_thinking    chat_template_kwargs / top level reasoning.effort              thinking (+ output_config.effort)
//                      (or reasoning_effort)
//   reasoning budget   reasoning_effort                 reasoning.effort              thinking.budget_tokens / effort
//   reasoning_effort   reasoning_effort                 reasoning.effort              output_config.effort
//   constraint         response_format, tool_choice     text.format, tool_choice      output_config.format, tool_choice
//   output limit       max_(completion_)tokens: reject  max_output_tokens: reject     max_tokens: clamp
//
// To add a protocol: parse its body, write its to_generation_request, and
// format PipelineOutputs as its events; nothing in the pipeline changes.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "api/ignored_parts.h"
#include "api/openai_request.h"

namespace llmesh::api {

// The reasoning switch when the client sends none, the same for every
// protocol: thinking off. The template always receives the switch explicitly
// (Qwen3's enable_thinking), so its own default never applies:
//   chat       chat_template_kwargs.enable_thinking or top-level enable_thinking; else reasoning_effort
//   Responses  reasoning.effort: off/none off, minimal..xhigh on
//   Anthropic  thinking {type: enabled} on, {type: adaptive} on unless output_config.effort is off/none,
//              disabled off
// Off because that is what the Anthropic API means by an absent `thinking`
// (Claude Code turns it on when it wants it), and answers without a reasoning
// preamble are what an OpenAI client that never heard of reasoning expects.
inline constexpr bool kDefaultEnableThinking = false;

// The structured output a request asks for: the engine constrains sampling to it.
struct ConstraintSpec {
  enum class Kind { None, JsonSchema, ToolCall };
  Kind kind = Kind::None;
  // JsonSchema: one JSON value valid against `schema` (client key order: the
  // grammar emits properties in this order); `param` is the field errors name.
  nlohmann::ordered_json schema;
  std::string param;
  // ToolCall: one call to one of `tools` (client key order), to `forced_tool_name` when it is set.
  nlohmann::ordered_json tools;
  std::string forced_tool_name;

  static ConstraintSpec json_schema(nlohmann::ordered_json schema, std::string param) {
    return {.kind = Kind::JsonSchema,
            .schema = std::move(schema),
            .param = std::move(param),
            .tools = {},
            .forced_tool_name = {}};
  }
  static ConstraintSpec tool_call(nlohmann::ordered_json tools, std::string forced_tool_name) {
    return {.kind = Kind::ToolCall,
            .schema = {},
            .param = {},
            .tools = std::move(tools),
            .forced_tool_name = std::move(forced_tool_name)};
  }
};

// What happens when params.max_tokens and the prompt do not both fit the context.
struct OutputLimitPolicy {
  enum class Kind {
    Reject,  // 400 context_length_exceeded naming `param` (OpenAI chat and Responses)
    Clamp,   // max_tokens shrinks to what fits; 400 "prompt is too long" only when nothing does (Anthropic)
  };
  Kind kind = Kind::Reject;
  std::string param = "max_tokens";   // Reject: the field the error names
  std::string input_name = "prompt";  // Reject: what the error calls the prompt ("input" in Responses)
};

// How the prompt's errors read: OpenAI's messages with a `param`, or
// Anthropic's "field: message" (its error bodies carry no param).
enum class ErrorStyle { OpenAI, Anthropic };

struct GenerationRequest {
  // What the chat template renders: OpenAI chat-shaped messages and
  // [{type: "function", function: {name, description, parameters}}] tools.
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools = nlohmann::ordered_json::array();
  nlohmann::json template_kwargs = nlohmann::json::object();  // extra template variables (never enable_thinking)
  std::string assistant_prefill;  // appended after the generation prompt: the answer continues it
  bool enable_thinking = kDefaultEnableThinking;
  std::optional<int64_t> reasoning_budget_tokens;  // absent: unlimited (see reasoning_effort.h)
  // The template's reasoning level, low | medium | high (harmony's "Reasoning:"); absent: its default.
  std::optional<std::string> reasoning_effort;

  // Sampling, stop strings, logprobs, min_tokens, ignore_eos, max_tokens (as
  // requested; absent: whatever fits), and the wire's model / stream flags.
  GenerationParams params;
  OutputLimitPolicy output_limit;
  ConstraintSpec constraint;
  bool parse_tool_calls = false;  // tools given and not switched off: tool-call syntax becomes tool calls
  ErrorStyle error_style = ErrorStyle::OpenAI;
  IgnoredParts ignored;  // what the protocol parser ignored: reported in a response header
};

struct MessagesRequest;   // anthropic_request.h
struct ResponsesRequest;  // responses_request.h

// The normalized request of each protocol. `body` is the raw request: the
// constraint's schemas are read from it in the client's key order.
GenerationRequest to_generation_request(const ChatCompletionRequest& request, const std::string& body);
GenerationRequest to_generation_request(const ResponsesRequest& request, const std::string& body);
// Anthropic: max_tokens is clamped to what fits (Claude Code asks for
// 32,000-64,000); tool_choice any/tool and output_config.format become the constraint.
GenerationRequest to_generation_request(const MessagesRequest& request);

// JSON objects keep the client's key order here, because the grammar emits
// object properties in schema order (nlohmann::json, used to parse the rest
// of a request, sorts keys). The value at `path` in the raw `body`, or
// `fallback` when the body has nothing there.
nlohmann::ordered_json ordered_value_at(const std::string& body, std::initializer_list<const char*> path,
                                        const nlohmann::json& fallback);

}  // namespace llmesh::api
