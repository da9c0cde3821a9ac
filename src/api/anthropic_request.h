// Parsing and validation of Anthropic Messages bodies (POST /v1/messages and
// /v1/messages/count_tokens) into what the chat template and the engine need.
//
// Anthropic content blocks become the OpenAI-style messages chat templates
// are written for:
//   system (string or text blocks)       -> a first {role: "system"} message; a block
//                                           starting "x-anthropic-billing-header:" is dropped
//                                           (its value changes per conversation and would
//                                           defeat cross-conversation prefix caching)
//   {role: "system"} inside messages     -> a system message at that position (Claude Code sends it)
//   user text / document (text) blocks   -> one user message, blocks joined with "\n"
//   user tool_result blocks              -> {role: "tool", tool_call_id, name, content} messages, in order
//   assistant text blocks                -> content; thinking blocks -> reasoning_content
//                                           (replayed only where the template does it);
//                                           redacted_thinking -> dropped; tool_use -> tool_calls
//   a final assistant message (no tool_use) -> assistant_prefill: the response continues it
// Key order of every object is kept (ordered_json): the prompt shows tool schemas
// and tool-call inputs the way the client sent them, turn after turn.
// cache_control, metadata, context_management and unknown keys are accepted and ignored
// (top-level ones are listed in `ignored`); blocks recording server-side work are skipped,
// blocks of an unknown type are a 400 (see ignored_parts.h).
// Every problem is an ApiError 400 whose message names the field ("messages.2.content.0.type").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "api/openai_request.h"

namespace llmesh::api {

enum class ToolChoiceMode { Auto, Any, Tool, None };

struct MessagesRequest {
  // model, max_tokens (as requested; clamped later), temperature, top_p, top_k,
  // stop (from stop_sequences), stream.
  GenerationParams params;
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();  // for the chat template
  nlohmann::ordered_json tools =
      nlohmann::ordered_json::array();  // [{type: "function", function: {name, description, parameters}}]
  std::string assistant_prefill;        // text of a final assistant turn that the response continues
  ToolChoiceMode tool_choice = ToolChoiceMode::Auto;
  std::string forced_tool_name;  // tool_choice {type: "tool", name}
  // The template's reasoning switch (Qwen3 enable_thinking). See resolve_thinking().
  bool enable_thinking = false;
  std::optional<int64_t> thinking_budget_tokens;  // thinking.budget_tokens as given
  std::string effort;                             // output_config.effort ("" when absent)
  // What the engine enforces with thinking on: budget_tokens, else the effort's (reasoning_effort.h).
  std::optional<int64_t> reasoning_budget_tokens;
  std::optional<std::string> reasoning_effort;  // from output_config.effort: the template's level (low/medium/high)
  nlohmann::ordered_json output_schema;           // output_config.format json_schema; null when absent
  int num_dropped_system_blocks = 0;              // billing-header blocks left out of the prompt
  IgnoredParts ignored;  // record blocks and unused top-level fields (see ignored_parts.h)
};

enum class MessagesEndpoint { Create, CountTokens };

// The body as ordered JSON, or ApiError 400 saying why it is not a JSON object.
nlohmann::ordered_json parse_ordered_json_body(const std::string& body);

// Create requires max_tokens (an integer >= 1); CountTokens ignores the generation fields.
MessagesRequest parse_messages_request(const nlohmann::ordered_json& body, MessagesEndpoint endpoint);

// The reasoning switch from `thinking` and `output_config.effort`:
//   {type: "enabled", budget_tokens} -> on;  {type: "disabled"} -> off;
//   {type: "adaptive"} -> on, except with effort "off" or "none";
//   absent -> kDefaultEnableThinking (off, as in the Anthropic API: no extended thinking unless asked).
bool resolve_thinking(const std::string& thinking_type, const std::string& effort);

// True for a system text block Claude Code adds per conversation ("x-anthropic-billing-header: cc_version=…").
bool is_billing_header_block(const std::string& text);

}  // namespace llmesh::api
