#include "api/constrained_output.h"

#include <fmt/format.h>

#include "api/api_error.h"
#include "api/output_options.h"
#include "core/error.h"
#include "grammar/grammar_constraint.h"
#include "grammar/json_schema_grammar.h"
#include "text/tool_call_format.h"

namespace llmesh::api {

using json = nlohmann::ordered_json;
namespace g = llmesh::grammar;

namespace {

constexpr const char* kReasoningOpen = "<think>";
constexpr const char* kReasoningClose = "</think>";

// `body`, preceded by the reasoning block the model may (or must) finish first.
g::Symbol with_reasoning(g::GrammarBuilder& b, g::Symbol body, const ReasoningPrefix& reasoning) {
  // Templates put up to two newlines after </think>; the output parser drops them.
  const g::Symbol after_close = b.repeat(b.literal("\n"), 0, 2);
  if (reasoning.starts_in_reasoning) return b.sequence({b.text_until(kReasoningClose), after_close, body});
  if (reasoning.allow_reasoning) {
    return b.sequence(
        {b.optional(b.sequence({b.literal(kReasoningOpen), b.text_until(kReasoningClose), after_close})), body});
  }
  return body;
}

std::shared_ptr<engine::TokenConstraint> finish_constraint(const ServerContext& ctx, g::GrammarBuilder& b,
                                                           g::Symbol root) {
  auto compiled = std::make_shared<const g::CompiledGrammar>(b.build(root));
  return std::make_shared<g::GrammarConstraint>(std::move(compiled),
                                                g::VocabIndex::for_tokenizer(*ctx.model->tokenizer));
}

}  // namespace

std::shared_ptr<engine::TokenConstraint> make_json_constraint(const ServerContext& ctx, const json& schema,
                                                              const ReasoningPrefix& reasoning,
                                                              const std::string& param,
                                                              std::vector<std::string>* ignored) {
  g::GrammarBuilder b;
  g::Symbol body;
  try {
    g::JsonSchemaCompiler compiler(b, schema, ignored);
    body = compiler.root_value();
  } catch (const Error& e) {
    throw ApiError(400, "invalid_request_error", fmt::format("unusable JSON schema: {}", e.what()), param);
  }
  return finish_constraint(ctx, b, with_reasoning(b, body, reasoning));
}

std::shared_ptr<engine::TokenConstraint> make_tool_call_constraint(const ServerContext& ctx, const json& tools,
                                                                   const std::string& forced_name,
                                                                   const ReasoningPrefix& reasoning,
                                                                   std::vector<std::string>* ignored) {
  if (!tools.is_array() || tools.empty()) {
    throw ApiError(400, "invalid_request_error", "a forced tool call needs at least one tool in 'tools'",
                   "tool_choice");
  }
  // The same format the output parser expects (detected from the chat template; Hermes by default).
  const text::ToolCallFormat format = model_tool_call_format(ctx);
  g::GrammarBuilder b;
  std::vector<g::Symbol> calls;
  for (size_t i = 0; i < tools.size(); ++i) {
    const json& tool = tools[i];
    const json& function = tool.contains("function") ? tool["function"] : tool;
    if (!function.is_object() || !function.contains("name") || !function["name"].is_string()) {
      throw ApiError(400, "invalid_request_error", fmt::format("tools[{}] has no function name", i), "tools");
    }
    const std::string name = function["name"].get<std::string>();
    if (!forced_name.empty() && name != forced_name) continue;
    // OpenAI chat nests {name, parameters} in "function"; Responses and
    // Anthropic tools are flat, Anthropic's schema is "input_schema".
    json schema = json{{"type", "object"}};
    for (const char* key : {"parameters", "input_schema"})
      if (function.contains(key) && !function[key].is_null()) schema = function[key];
    std::vector<std::string> tool_ignored;
    g::Symbol arguments;
    try {
      g::JsonSchemaCompiler compiler(b, schema, &tool_ignored);
      arguments = compiler.root_value();
    } catch (const Error& e) {
      throw ApiError(400, "invalid_request_error",
                     fmt::format("unusable parameters schema of tool '{}': {}", name, e.what()), "tools");
    }
    if (ignored)
      for (const auto& entry : tool_ignored) ignored->push_back(fmt::format("tool {}: {}", name, entry));
    const std::string name_json = json(name).dump();
    if (format == text::ToolCallFormat::Llama3Json) {
      calls.push_back(
          b.sequence({b.literal("{\"name\": " + name_json + ", \"parameters\": "), arguments, b.literal("}")}));
    } else if (format == text::ToolCallFormat::DeepSeekV3) {
      calls.push_back(b.sequence({b.literal("<｜tool▁call▁begin｜>function<｜tool▁sep｜>" + name + "\n```json\n"),
                                  arguments, b.literal("\n```<｜tool▁call▁end｜>")}));
    } else {
      calls.push_back(
          b.sequence({b.literal("{\"name\": " + name_json + ", \"arguments\": "), arguments, b.literal("}")}));
    }
  }
  if (calls.empty()) {
    throw ApiError(400, "invalid_request_error",
                   fmt::format("tool_choice names '{}', which is not among the tools", forced_name), "tool_choice");
  }
  g::Symbol body = b.choice(calls);
  if (format == text::ToolCallFormat::DeepSeekV3) {
    body = b.sequence({b.literal("<｜tool▁calls▁begin｜>"), body, b.literal("<｜tool▁calls▁end｜>")});
  } else if (format != text::ToolCallFormat::Llama3Json) {
    body = b.sequence({b.literal("<tool_call>\n"), body, b.literal("\n</tool_call>")});
  }
  return finish_constraint(ctx, b, with_reasoning(b, body, reasoning));
}

std::shared_ptr<engine::TokenConstraint> make_output_constraint(const ServerContext& ctx, const ConstraintSpec& spec,
                                                                const ReasoningPrefix& reasoning,
                                                                std::vector<std::string>* ignored) {
  switch (spec.kind) {
    case ConstraintSpec::Kind::None: return nullptr;
    case ConstraintSpec::Kind::JsonSchema:
      return make_json_constraint(ctx, spec.schema, reasoning, spec.param, ignored);
    case ConstraintSpec::Kind::ToolCall:
      return make_tool_call_constraint(ctx, spec.tools, spec.forced_tool_name, reasoning, ignored);
  }
  return nullptr;
}

}  // namespace llmesh::api
