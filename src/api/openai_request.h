// Parsing and validation of OpenAI request bodies into what the pipeline
// needs. Every problem is an ApiError 400 naming the field (`param`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/ignored_parts.h"
#include "engine/sampling_params.h"
#include "model/model_files.h"

namespace llmesh::api {

// A request's `loop_guard` (true, false, or {"tokens": K, "max_period": P}):
// what it sets; the rest comes from the server's flags and the endpoint's default.
struct LoopGuardRequest {
  std::optional<bool> enabled;
  std::optional<int64_t> window_tokens;
  std::optional<int32_t> max_period;
};

// The generation controls of a request, as parsed from any protocol (chat
// completions, completions, Responses, Anthropic Messages).
struct GenerationParams {
  std::string model;  // "" when the request did not name one
  // Sampling fields the request set; the rest fall back to the model's generation_config.
  std::optional<float> temperature, top_p, min_p, repetition_penalty;
  std::optional<int32_t> top_k;
  float presence_penalty = 0.0f, frequency_penalty = 0.0f;
  std::optional<uint64_t> seed;
  std::optional<int64_t> max_tokens;  // absent: whatever fits the context
  int64_t min_tokens = 0;
  bool ignore_eos = false;
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  bool logprobs = false;
  int32_t top_logprobs = 0;
  int64_t cache_ttl_seconds = 0;  // pin the prompt's cached blocks this long (cache_retention.h); 0: LRU only
  LoopGuardRequest loop_guard;  // the llmesh extension `loop_guard`

  engine::SamplingParams sampling(const model::GenerationDefaults& defaults) const;
};

struct ChatCompletionRequest {
  GenerationParams params;
  nlohmann::json messages;  // validated: roles known, content a string, null or text parts (joined to a string)
  nlohmann::json tools;     // array (maybe empty)
  bool parse_tool_calls = false;  // tools given and tool_choice is not "none"
  // tool_choice "required" or {type: "function", function: {name}}: the output
  // must be a tool call (to forced_tool_name when set; it is among `tools`).
  bool tool_call_required = false;
  std::string forced_tool_name;
  // response_format json_schema (its schema; `true` when none was given) or
  // json_object ({"type": "object"}); absent for text.
  std::optional<nlohmann::json> response_schema;
  std::optional<bool> enable_thinking;
  std::optional<int64_t> reasoning_budget_tokens;  // from reasoning_effort (see reasoning_effort.h)
  std::optional<std::string> reasoning_effort;     // from reasoning_effort: the template's level (low/medium/high)
  nlohmann::json template_kwargs;  // chat_template_kwargs (object)
  IgnoredParts ignored;            // fields, message keys and tools not used (see ignored_parts.h)
};

struct CompletionRequest {
  GenerationParams params;
  std::optional<std::string> prompt_text;
  std::vector<int32_t> prompt_ids;  // when the prompt was given as token ids
  bool echo = false;
};

ChatCompletionRequest parse_chat_completion_request(const nlohmann::json& body);
CompletionRequest parse_completion_request(const nlohmann::json& body);

// The body as JSON, or ApiError 400 saying why it is not a JSON object.
nlohmann::json parse_json_body(const std::string& body);

// Messages for the chat template: content parts joined into one string;
// message keys no template uses are dropped and recorded in *ignored (may be null).
nlohmann::json normalize_messages(const nlohmann::json& messages, IgnoredParts* ignored = nullptr);

}  // namespace llmesh::api
