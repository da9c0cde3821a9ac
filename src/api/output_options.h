// How to split a chat model's output (reasoning / content / tool calls),
// decided once per request from the model and its rendered prompt. Shared by
// /v1/chat/completions, /v1/messages and /v1/responses.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "api/server_context.h"
#include "text/output_parser.h"
#include "text/tool_call_format.h"

namespace llmesh::api {

// The tool-call syntax of the served model, detected from its chat template
// source. A template that shows no tool syntax (or no template) gives Hermes,
// the most common convention, so a request with tools still has a format to
// parse and to force.
text::ToolCallFormat model_tool_call_format(const ServerContext& ctx);

// `prompt` is the rendered prompt (a template may already have opened <think>;
// for harmony, a forced call or a prefill a message's body);
// `tools` the request's tools (GenerationRequest::tools, any API's shape), whose
// parameter types the XML formats need to type the values they parse.
text::OutputParserOptions output_parser_options(const ServerContext& ctx, const std::string& prompt,
                                                bool parse_tool_calls, const nlohmann::ordered_json& tools);

}  // namespace llmesh::api
