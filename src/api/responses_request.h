// Parsing and validation of POST /v1/responses bodies (the OpenAI Responses
// API, what Codex speaks) into what the chat pipeline needs: chat-template
// messages, OpenAI-chat-shaped tools, generation params and the output
// controls (tool_choice, text.format, reasoning). Every problem is an
// ApiError 400 naming the field (`param`).
//
// Input items -> chat messages:
//   "a string"                                   -> one user message
//   {type:"message", role, content}              -> role (developer -> system), text parts joined with "\n"
//     (or {role, content} without type)             input_text / output_text / refusal parts; images/files: 400
//   {type:"reasoning", summary, content, encrypted_content}
//                                                -> reasoning_content of the assistant turn it opens
//   {type:"function_call", call_id, name, arguments}
//                                                -> a tool_calls entry of the current assistant turn
//   {type:"function_call_output", call_id, output} -> a tool message
// Consecutive reasoning / assistant message / function_call items form one
// assistant turn (the shape /v1/responses itself outputs), so a stateless
// client that resends the history renders the same prompt the previous turn
// generated from: turn N's prompt is a prefix of turn N+1's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/openai_request.h"
#include "api/responses_store.h"

namespace llmesh::api {

enum class ResponsesToolChoice { Auto, None, Required, Named };

enum class ResponsesTextFormat { Text, JsonSchema, JsonObject };

struct ResponsesRequest {
  GenerationParams params;  // model, temperature, top_p, max_tokens (= max_output_tokens), stream
  nlohmann::json messages;  // chat-template messages (see above)
  // The conversation as input items: the stored history of previous_response_id, then `input`
  // (a string input as one user message item). With the output, what `store` keeps.
  nlohmann::json conversation_items;
  std::string previous_response_id;  // "" when not given
  nlohmann::json tools;  // function tools in chat shape: [{type:"function", function:{name, description, parameters}}]
  std::vector<std::string> ignored_tool_types;  // non-function tools (web_search, namespace, custom, …), skipped

  ResponsesToolChoice tool_choice = ResponsesToolChoice::Auto;
  std::string forced_tool_name;  // tool_choice {type:"function", name}
  bool parallel_tool_calls = true;

  std::optional<bool> enable_thinking;       // from reasoning.effort: off/none -> false, minimal..xhigh -> true
  std::optional<int64_t> reasoning_budget_tokens;  // from reasoning.effort (see reasoning_effort.h)
  std::optional<std::string> reasoning_effort;     // from reasoning.effort: the template's level (low/medium/high)
  nlohmann::json reasoning_echo;             // {effort, summary} as given (nulls when absent)
  bool include_encrypted_reasoning = false;  // include: ["reasoning.encrypted_content"]

  ResponsesTextFormat text_format = ResponsesTextFormat::Text;
  nlohmann::json text_schema;  // json_schema: the schema; json_object: {"type":"object"}
  nlohmann::json text_echo;    // `text` as the response echoes it ({format:{type:"text"}} by default)

  // Echoed in the response object unchanged.
  nlohmann::json instructions;  // string or null
  nlohmann::json metadata;      // object (maybe empty)
  nlohmann::json prompt_cache_key;
  nlohmann::json user;
  nlohmann::json tools_echo;        // `tools` as given
  nlohmann::json tool_choice_echo;  // `tool_choice` as given ("auto" by default)
  bool store = true;
  IgnoredParts ignored;  // unknown input items, non-function tools, unused fields (see ignored_parts.h)
};

// `store` resolves previous_response_id (null: previous_response_id is a 400).
ResponsesRequest parse_responses_request(const nlohmann::json& body, ResponseStore* store = nullptr);

// `instructions`, then the `history` items, then `input` (string or item array) -> chat-template messages.
// Items of unknown types are skipped and recorded in *ignored (may be null).
nlohmann::json responses_input_to_messages(const nlohmann::json& input, const nlohmann::json& instructions,
                                           const nlohmann::json& history = nlohmann::json::array(),
                                           IgnoredParts* ignored = nullptr);

// Function tools -> chat shape; other tool types are appended to *ignored_types.
nlohmann::json responses_tools_to_chat_tools(const nlohmann::json& tools, std::vector<std::string>* ignored_types);

}  // namespace llmesh::api
