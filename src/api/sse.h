// Server-sent events framing for streaming responses.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace llmesh::api {

// JSON text that never throws on invalid UTF-8 (replaced by U+FFFD): token
// bytes in logprobs may cut a character.
inline std::string dump_json(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// One `data:` event. JSON text has no raw newlines, so one data line suffices.
inline std::string sse_data(const nlohmann::json& value) { return "data: " + dump_json(value) + "\n\n"; }

// One typed event (Anthropic Messages, OpenAI Responses): the `event:` line
// repeats the payload's "type", as the official SDKs check.
inline std::string sse_event(const nlohmann::json& value) {
  return "event: " + value.value("type", std::string("message")) + "\n" + sse_data(value);
}

// A comment line: clients ignore it; it keeps the connection busy.
inline std::string sse_comment(const std::string& text) { return ": " + text + "\n\n"; }

inline std::string sse_done() { return "data: [DONE]\n\n"; }

}  // namespace llmesh::api
