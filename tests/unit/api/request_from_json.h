// A GenerationRequest from a request body of each API, as the server parses it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "api/anthropic_request.h"
#include "api/generation_pipeline.h"
#include "api/openai_request.h"
#include "api/responses_request.h"

namespace llmesh::api::test {

inline GenerationRequest from_chat(const std::string& body) {
  return to_generation_request(parse_chat_completion_request(nlohmann::json::parse(body)), body);
}
inline GenerationRequest from_responses(const std::string& body) {
  return to_generation_request(parse_responses_request(nlohmann::json::parse(body)), body);
}
inline GenerationRequest from_messages(const std::string& body) {
  return to_generation_request(parse_messages_request(nlohmann::ordered_json::parse(body), MessagesEndpoint::Create));
}

}  // namespace llmesh::api::test
