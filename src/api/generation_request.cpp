// The three protocols' translations into the one GenerationRequest. Apart
// from the request structs, nothing here needs the server (the fuzz targets in
// tests/fuzz link this file without the HTTP layer).
#include "api/generation_request.h"

#include "api/anthropic_request.h"
#include "api/responses_request.h"

namespace llmesh::api {

using nlohmann::json;

nlohmann::ordered_json ordered_value_at(const std::string& body, std::initializer_list<const char*> path,
                                        const nlohmann::json& fallback) {
  using OJson = nlohmann::ordered_json;  // the client's key order (nlohmann::json sorts keys)
  const OJson ordered = OJson::parse(body, nullptr, /*allow_exceptions=*/false);
  const OJson* node = &ordered;
  for (const char* key : path) {
    if (!node->is_object() || !node->contains(key)) return OJson(fallback);
    node = &(*node)[key];
  }
  return *node;
}

GenerationRequest to_generation_request(const ChatCompletionRequest& request, const std::string& body) {
  GenerationRequest out;
  out.messages = nlohmann::ordered_json(request.messages);
  out.tools = nlohmann::ordered_json(request.tools);
  out.template_kwargs = request.template_kwargs;
  out.template_kwargs.erase("enable_thinking");
  out.enable_thinking = request.enable_thinking.value_or(kDefaultEnableThinking);
  out.reasoning_budget_tokens = request.reasoning_budget_tokens;
  out.reasoning_effort = request.reasoning_effort;
  out.params = request.params;
  out.parse_tool_calls = request.parse_tool_calls;
  out.ignored = request.ignored;
  if (request.tool_call_required) {
    // The function tools in the client's key order; the custom and hosted tools the parser set
    // aside are not offered to the model here either.
    nlohmann::ordered_json function_tools = nlohmann::ordered_json::array();
    for (const auto& tool : ordered_value_at(body, {"tools"}, json::array())) {
      if (tool.is_object() && (!tool.contains("type") || tool["type"] == "function")) function_tools.push_back(tool);
    }
    if (function_tools.empty()) function_tools = nlohmann::ordered_json(request.tools);
    out.constraint = ConstraintSpec::tool_call(std::move(function_tools), request.forced_tool_name);
  } else if (request.response_schema) {
    out.constraint = ConstraintSpec::json_schema(
        ordered_value_at(body, {"response_format", "json_schema", "schema"}, *request.response_schema),
        "response_format");
  }
  return out;
}

GenerationRequest to_generation_request(const ResponsesRequest& request, const std::string& body) {
  GenerationRequest out;
  out.messages = nlohmann::ordered_json(request.messages);
  out.tools = nlohmann::ordered_json(request.tools);
  out.enable_thinking = request.enable_thinking.value_or(kDefaultEnableThinking);
  out.reasoning_budget_tokens = request.reasoning_budget_tokens;
  out.reasoning_effort = request.reasoning_effort;
  out.params = request.params;
  out.ignored = request.ignored;
  out.output_limit.param = "max_output_tokens";
  out.output_limit.input_name = "input";
  out.parse_tool_calls = !request.tools.empty() && request.tool_choice != ResponsesToolChoice::None;
  if (request.tool_choice == ResponsesToolChoice::Required || request.tool_choice == ResponsesToolChoice::Named) {
    // The function tools as the client sent them (flat {type, name, parameters}), in its key order.
    nlohmann::ordered_json function_tools = nlohmann::ordered_json::array();
    for (const auto& tool : ordered_value_at(body, {"tools"}, json::array())) {
      if (tool.is_object() && tool.contains("type") && tool["type"] == "function") function_tools.push_back(tool);
    }
    if (function_tools.empty()) function_tools = nlohmann::ordered_json(request.tools);
    out.constraint = ConstraintSpec::tool_call(std::move(function_tools), request.forced_tool_name);
  } else if (request.text_format != ResponsesTextFormat::Text) {
    out.constraint = ConstraintSpec::json_schema(
        ordered_value_at(body, {"text", "format", "schema"}, request.text_schema), "text.format.schema");
  }
  return out;
}

GenerationRequest to_generation_request(const MessagesRequest& request) {
  GenerationRequest out;
  out.messages = request.messages;
  out.tools = request.tools;
  out.assistant_prefill = request.assistant_prefill;
  out.enable_thinking = request.enable_thinking;
  out.reasoning_budget_tokens = request.reasoning_budget_tokens;
  out.reasoning_effort = request.reasoning_effort;
  out.params = request.params;
  out.ignored = request.ignored;
  out.output_limit.kind = OutputLimitPolicy::Kind::Clamp;
  out.parse_tool_calls = !request.tools.empty() && request.tool_choice != ToolChoiceMode::None;
  out.error_style = ErrorStyle::Anthropic;
  if (request.tool_choice == ToolChoiceMode::Any || request.tool_choice == ToolChoiceMode::Tool) {
    out.constraint = ConstraintSpec::tool_call(request.tools, request.forced_tool_name);
  } else if (!request.output_schema.is_null()) {
    out.constraint = ConstraintSpec::json_schema(request.output_schema, "output_config.format");
  }
  return out;
}

}  // namespace llmesh::api
