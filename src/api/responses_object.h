// The `response` object of the Responses API: what POST /v1/responses returns
// (stream: false) and what response.created / .in_progress / .completed /
// .incomplete / .failed events carry. Fields the request set are echoed.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "api/responses_request.h"
#include "engine/sampling_params.h"

namespace llmesh::api {

struct ResponsesUsage {
  int64_t num_input_tokens = 0;
  int64_t num_cached_tokens = 0;  // input tokens whose K/V came from the prefix cache
  int64_t num_output_tokens = 0;
  int64_t num_reasoning_tokens = 0;  // of the output tokens, those inside the reasoning block

  // {input_tokens, input_tokens_details:{cached_tokens}, output_tokens,
  //  output_tokens_details:{reasoning_tokens}, total_tokens}
  nlohmann::json to_json() const;
};

// Everything in a response object except status, output, usage and errors.
class ResponseEnvelope {
 public:
  ResponseEnvelope(const ResponsesRequest& request, std::string response_id, int64_t created_at, std::string model,
                   const engine::SamplingParams& sampling);

  const std::string& response_id() const { return response_id_; }

  // status: in_progress | completed | incomplete | failed. usage, error and
  // incomplete_details may be null.
  nlohmann::json build(const std::string& status, const nlohmann::json& output, const nlohmann::json& usage,
                       const nlohmann::json& error, const nlohmann::json& incomplete_details) const;

 private:
  std::string response_id_;
  nlohmann::json fields_;  // the echoed, unchanging fields
};

}  // namespace llmesh::api
