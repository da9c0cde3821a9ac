#include "api/anthropic_prompt.h"

#include "api/generation_pipeline.h"

namespace llmesh::api {

GenerationRequest to_generation_request(const MessagesRequest& request) {
  GenerationRequest out;
  out.messages = request.messages;
  out.tools = request.tools;
  out.assistant_prefill = request.assistant_prefill;
  out.enable_thinking = request.enable_thinking;
  out.reasoning_budget_tokens = request.reasoning_budget_tokens;
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

std::string render_messages_prompt(const text::ChatTemplate& chat_template, const MessagesRequest& request) {
  return render_prompt(chat_template, to_generation_request(request));
}

}  // namespace llmesh::api
