#include "api/output_options.h"

namespace llmesh::api {

text::ToolCallFormat model_tool_call_format(const ServerContext& ctx) {
  // A few substring searches over a template of a few KB: cheap enough per request.
  const text::ToolCallFormat detected =
      ctx.model ? text::detect_tool_call_format(ctx.model->tokenizer_files.chat_template) : text::ToolCallFormat::None;
  return detected == text::ToolCallFormat::None ? text::ToolCallFormat::Hermes : detected;
}

text::OutputParserOptions output_parser_options(const ServerContext& ctx, const std::string& prompt,
                                                bool parse_tool_calls, const nlohmann::ordered_json& tools) {
  text::OutputParserOptions parser;
  if (model_tool_call_format(ctx) == text::ToolCallFormat::Harmony) {
    // gpt-oss: the analysis channel is its reasoning, always there; no <think>.
    parser.tool_call_format = text::ToolCallFormat::Harmony;
    parser.parse_reasoning = true;
    parser.parse_tool_calls = parse_tool_calls;
    parser.harmony_open_header = text::harmony_open_header(prompt).value_or("");
    return parser;
  }
  parser.parse_reasoning = ctx.model->tokenizer->token_id(parser.reasoning_open).has_value() ||
                           prompt.find(parser.reasoning_open) != std::string::npos;
  parser.starts_in_reasoning =
      parser.parse_reasoning && text::ends_inside_block(prompt, parser.reasoning_open, parser.reasoning_close);
  parser.parse_tool_calls = parse_tool_calls;
  parser.tool_call_format = model_tool_call_format(ctx);
  if (parse_tool_calls && (parser.tool_call_format == text::ToolCallFormat::Qwen3CoderXml ||
                           parser.tool_call_format == text::ToolCallFormat::Glm45Xml)) {
    parser.tool_parameter_types = text::ToolParameterTypes::from_tools(tools);
  }
  return parser;
}

}  // namespace llmesh::api
