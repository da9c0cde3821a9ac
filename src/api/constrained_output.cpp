#include "api/constrained_output.h"

#include <algorithm>

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

bool is_xml_format(text::ToolCallFormat format) {
  return format == text::ToolCallFormat::Qwen3CoderXml || format == text::ToolCallFormat::Glm45Xml;
}

// One value of an XML call: raw text where the schema allows a string (what
// the parser keeps as a string), else the JSON grammar of the property's
// schema. `close` ends the value; a raw text never contains it nor
// </tool_call> (where the output parser would end the call).
g::Symbol xml_argument_value(g::GrammarBuilder& b, g::JsonSchemaCompiler& compiler, const json& root,
                             const json* property, const std::string& path, const std::string& layout_close,
                             const std::string& close, std::vector<std::string>* ignored) {
  const text::JsonTypes types = property ? text::json_types_of_schema(*property, root) : 0;
  if (types != 0 && !(types & text::kJsonString)) {
    return b.sequence({compiler.value(*property, path), b.literal(layout_close + close)});
  }
  // Raw text. A string enum or const: exactly those texts.
  if (property && property->is_object()) {
    std::vector<g::Symbol> texts;
    if (auto values = property->find("enum"); values != property->end() && values->is_array()) {
      for (const auto& value : *values)
        if (value.is_string()) texts.push_back(b.literal(value.get<std::string>() + layout_close + close));
    } else if (auto value = property->find("const"); value != property->end() && value->is_string()) {
      texts.push_back(b.literal(value->get<std::string>() + layout_close + close));
    }
    if (!texts.empty()) return b.choice(texts);
    if (ignored) {
      for (const char* keyword : {"minLength", "maxLength", "pattern", "format"})
        if (property->contains(keyword)) ignored->push_back(fmt::format("{} at {} (an XML text value)", keyword, path));
    }
  }
  return b.text_until(layout_close + close, {close, "</tool_call>"});
}

// A call in an XML format: every property of the schema in its order, the
// required ones always, the optional ones maybe; then the required names the
// schema has no property for (as text). A schema without properties: no arguments.
//   Qwen3CoderXml  <function=NAME>\n<parameter=K>\nV\n</parameter>\n…</function>
//   Glm45Xml       NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n…   (`compact`: no newlines, as GLM-4.7)
g::Symbol xml_call(g::GrammarBuilder& b, g::JsonSchemaCompiler& compiler, text::ToolCallFormat format, bool compact,
                   const std::string& name, const json& schema, std::vector<std::string>* ignored) {
  const bool qwen = format == text::ToolCallFormat::Qwen3CoderXml;
  const std::string nl = compact ? "" : "\n";
  std::vector<std::string> required;
  if (schema.is_object() && schema.contains("required") && schema["required"].is_array())
    for (const auto& key : schema["required"])
      if (key.is_string()) required.push_back(key.get<std::string>());
  auto is_required = [&](const std::string& key) {
    return std::find(required.begin(), required.end(), key) != required.end();
  };
  auto argument = [&](const std::string& key, const json* property) {
    const std::string path = "#/properties/" + key;
    if (qwen) {
      return b.sequence({b.literal("<parameter=" + key + ">\n"),
                         xml_argument_value(b, compiler, schema, property, path, "\n", "</parameter>", ignored),
                         b.literal("\n")});
    }
    return b.sequence({b.literal("<arg_key>" + key + "</arg_key>" + nl + "<arg_value>"),
                       xml_argument_value(b, compiler, schema, property, path, "", "</arg_value>", ignored),
                       b.literal(nl)});
  };
  std::vector<g::Symbol> parts;
  parts.push_back(b.literal(qwen ? "<function=" + name + ">\n" : name + nl));
  const json* properties = schema.is_object() && schema.contains("properties") && schema["properties"].is_object()
                               ? &schema["properties"]
                               : nullptr;
  if (properties) {
    for (const auto& [key, property] : properties->items()) {
      const g::Symbol item = argument(key, &property);
      parts.push_back(is_required(key) ? item : b.optional(item));
    }
  }
  for (const std::string& key : required)
    if (!properties || !properties->contains(key)) parts.push_back(argument(key, nullptr));
  if (qwen) parts.push_back(b.literal("</function>\n"));
  return b.sequence(parts);
}

// The function a harmony forced call goes to when there is only one it may be: the named one,
// or the only function among the tools; "" when the model chooses.
std::string harmony_single_function(const json& tools, const std::string& forced_name) {
  if (!forced_name.empty()) return forced_name;
  std::string name;
  int num_functions = 0;
  for (const json& tool : tools.is_array() ? tools : json::array()) {
    const json& function = tool.is_object() && tool.contains("function") ? tool["function"] : tool;
    if (!function.is_object() || !function.contains("name") || !function["name"].is_string()) return "";
    name = function["name"].get<std::string>();
    ++num_functions;
  }
  return num_functions == 1 ? name : "";
}

std::string harmony_call_header(const std::string& name) {
  return std::string(text::kHarmonyChannel) + "commentary to=" + std::string(text::kHarmonyFunctions) + name + " " +
         std::string(text::kHarmonyConstrain) + "json" + std::string(text::kHarmonyMessage);
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

std::string harmony_prompt_lead(const ConstraintSpec& spec) {
  switch (spec.kind) {
    case ConstraintSpec::Kind::None: return "";
    case ConstraintSpec::Kind::JsonSchema:
      return std::string(text::kHarmonyChannel) + "final" + std::string(text::kHarmonyMessage);
    case ConstraintSpec::Kind::ToolCall: {
      const std::string name = harmony_single_function(spec.tools, spec.forced_tool_name);
      return name.empty() ? "" : harmony_call_header(name);
    }
  }
  return "";
}

g::Grammar tool_call_grammar(text::ToolCallFormat format, const std::string& chat_template, const json& tools,
                             const std::string& forced_name, const ReasoningPrefix& reasoning,
                             std::vector<std::string>* ignored) {
  if (!tools.is_array() || tools.empty()) {
    throw ApiError(400, "invalid_request_error", "a forced tool call needs at least one tool in 'tools'",
                   "tool_choice");
  }
  // GLM-4.7's template writes its tags without newlines between them; GLM-4.5/4.6's with.
  const bool compact_xml =
      format == text::ToolCallFormat::Glm45Xml && chat_template.find("</arg_key><arg_value>") != std::string::npos;
  // Mistral's v11+ templates write [TOOL_CALLS]NAME[ARGS]{…}; the older ones a JSON array.
  const bool mistral_args = chat_template.find(text::kMistralArgs) != std::string::npos;
  // Harmony: the prompt opened the call's message when there is one function it can go to.
  const bool harmony_in_prompt =
      format == text::ToolCallFormat::Harmony && !harmony_single_function(tools, forced_name).empty();
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
      arguments = is_xml_format(format) ? xml_call(b, compiler, format, compact_xml, name, schema, &tool_ignored)
                                        : compiler.root_value();
    } catch (const Error& e) {
      throw ApiError(400, "invalid_request_error",
                     fmt::format("unusable parameters schema of tool '{}': {}", name, e.what()), "tools");
    }
    if (ignored)
      for (const auto& entry : tool_ignored) ignored->push_back(fmt::format("tool {}: {}", name, entry));
    const std::string name_json = json(name).dump();
    if (is_xml_format(format)) {
      calls.push_back(arguments);  // the whole call, name included
    } else if (format == text::ToolCallFormat::Llama3Json) {
      calls.push_back(
          b.sequence({b.literal("{\"name\": " + name_json + ", \"parameters\": "), arguments, b.literal("}")}));
    } else if (format == text::ToolCallFormat::DeepSeekV3) {
      calls.push_back(b.sequence({b.literal("<｜tool▁call▁begin｜>function<｜tool▁sep｜>" + name + "\n```json\n"),
                                  arguments, b.literal("\n```<｜tool▁call▁end｜>")}));
    } else if (format == text::ToolCallFormat::Harmony) {
      calls.push_back(harmony_in_prompt ? arguments : b.sequence({b.literal(harmony_call_header(name)), arguments}));
    } else if (format == text::ToolCallFormat::Mistral && mistral_args) {
      calls.push_back(b.sequence({b.literal(std::string(text::kMistralToolCalls) + name +
                                            std::string(text::kMistralArgs)),
                                  arguments}));
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
  } else if (format == text::ToolCallFormat::Mistral) {
    if (!mistral_args) body = b.sequence({b.literal(std::string(text::kMistralToolCalls) + "["), body, b.literal("]")});
  } else if (format == text::ToolCallFormat::Qwen3CoderXml) {
    body = b.sequence({b.literal("<tool_call>\n"), body, b.literal("</tool_call>")});
  } else if (format == text::ToolCallFormat::Glm45Xml) {
    body = b.sequence({b.literal("<tool_call>"), body, b.literal("</tool_call>")});
  } else if (format == text::ToolCallFormat::Harmony) {
    return b.build(body);  // no <think>: the header (in the prompt, or the grammar's) skips the analysis
  } else if (format != text::ToolCallFormat::Llama3Json) {
    body = b.sequence({b.literal("<tool_call>\n"), body, b.literal("\n</tool_call>")});
  }
  return b.build(with_reasoning(b, body, reasoning));
}

std::shared_ptr<engine::TokenConstraint> make_tool_call_constraint(const ServerContext& ctx, const json& tools,
                                                                   const std::string& forced_name,
                                                                   const ReasoningPrefix& reasoning,
                                                                   std::vector<std::string>* ignored) {
  // The same format the output parser expects (detected from the chat template; Hermes by default).
  const text::ToolCallFormat format = model_tool_call_format(ctx);
  const std::string& chat_template = ctx.model ? ctx.model->tokenizer_files.chat_template : std::string();
  auto compiled = std::make_shared<const g::CompiledGrammar>(
      tool_call_grammar(format, chat_template, tools, forced_name, reasoning, ignored));
  return std::make_shared<g::GrammarConstraint>(std::move(compiled),
                                                g::VocabIndex::for_tokenizer(*ctx.model->tokenizer));
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
