#include "api/output_options.h"

namespace llmesh::api {

ToolCallFormat model_tool_call_format(const ServerContext& ctx) {
  // A few substring searches over a template of a few KB: cheap enough per request.
  const ToolCallFormat detected =
      ctx.model ? detect_tool_call_format(ctx.model->files.chat_template) : ToolCallFormat::None;
  return detected == ToolCallFormat::None ? ToolCallFormat::Hermes : detected;
}

OutputParserOptions output_parser_options(const ServerContext& ctx, const std::string& prompt, bool parse_tool_calls) {
  OutputParserOptions parser;
  parser.parse_reasoning = ctx.model->tokenizer->token_id(parser.reasoning_open).has_value() ||
                           prompt.find(parser.reasoning_open) != std::string::npos;
  parser.starts_in_reasoning =
      parser.parse_reasoning && ends_inside_block(prompt, parser.reasoning_open, parser.reasoning_close);
  parser.parse_tool_calls = parse_tool_calls;
  parser.tool_call_format = model_tool_call_format(ctx);
  return parser;
}

}  // namespace llmesh::api
