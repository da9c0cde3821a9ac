#include "api/responses_object.h"

#include <cmath>

namespace llmesh::api {

using nlohmann::json;

json ResponsesUsage::to_json() const {
  return {{"input_tokens", num_input_tokens},
          {"input_tokens_details", {{"cached_tokens", num_cached_tokens}}},
          {"output_tokens", num_output_tokens},
          {"output_tokens_details", {{"reasoning_tokens", num_reasoning_tokens}}},
          {"total_tokens", num_input_tokens + num_output_tokens}};
}

namespace {

// Sampling values as the response reports them (float noise like 0.699999988 rounded away).
double rounded(float x) { return std::round(double(x) * 1e6) / 1e6; }

}  // namespace

ResponseEnvelope::ResponseEnvelope(const ResponsesRequest& request, std::string response_id, int64_t created_at,
                                   std::string model, const engine::SamplingParams& sampling)
    : response_id_(std::move(response_id)) {
  fields_ = {
      {"created_at", created_at},
      {"model", std::move(model)},
      {"background", false},
      {"instructions", request.instructions},
      {"max_output_tokens", request.params.max_tokens ? json(*request.params.max_tokens) : json(nullptr)},
      {"max_tool_calls", nullptr},
      {"parallel_tool_calls", request.parallel_tool_calls},
      {"previous_response_id",
       request.previous_response_id.empty() ? json(nullptr) : json(request.previous_response_id)},
      {"prompt_cache_key", request.prompt_cache_key},
      {"reasoning", request.reasoning_echo},
      {"service_tier", "default"},
      {"store", request.store},
      {"temperature", rounded(sampling.temperature)},
      {"text", request.text_echo},
      {"tool_choice", request.tool_choice_echo},
      {"tools", request.tools_echo},
      {"top_logprobs", 0},
      {"top_p", rounded(sampling.top_p)},
      {"truncation", "disabled"},
      {"user", request.user},
      {"metadata", request.metadata},
  };
}

json ResponseEnvelope::build(const std::string& status, const json& output, const json& usage, const json& error,
                             const json& incomplete_details) const {
  json response = {{"id", response_id_}, {"object", "response"}, {"status", status}};
  response.update(fields_);
  response["output"] = output;
  response["usage"] = usage;
  response["error"] = error;
  response["incomplete_details"] = incomplete_details;
  return response;
}

}  // namespace llmesh::api
