// Token constraints for structured output and forced tool calls, built from
// JSON schemas: response_format / text.format / output_config.format, and
// tool_choice required / any / a named tool. The engine applies them while
// sampling, so the output parses and validates by construction.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/generation_request.h"
#include "api/server_context.h"
#include "engine/token_constraint.h"
#include "grammar/grammar.h"
#include "text/tool_call_format.h"

namespace llmesh::api {

// Where the constrained part starts relative to the model's reasoning block.
struct ReasoningPrefix {
  bool starts_in_reasoning = false;  // the prompt opened <think>: free text until </think>, then the constrained part
  bool allow_reasoning = false;      // the model may open a <think> … </think> block first
};

// Output that is one JSON value valid against `schema` ({"type": "object"}
// for json_object mode). Keywords the grammar cannot enforce are appended to
// *ignored (may be null). ApiError 400 (param `param`) when the schema is unusable.
std::shared_ptr<engine::TokenConstraint> make_json_constraint(const ServerContext& ctx,
                                                              const nlohmann::ordered_json& schema,
                                                              const ReasoningPrefix& reasoning,
                                                              const std::string& param,
                                                              std::vector<std::string>* ignored);

// Output that is one tool call in the model's native format (see
// text/tool_call_format.h), its arguments valid against the tool's schema.
// `tools` is an OpenAI tools array ([{type: "function", function: {name,
// parameters}}]; flat {name, parameters} and Anthropic {name, input_schema}
// entries work too); `forced_name` empty means any of them.
std::shared_ptr<engine::TokenConstraint> make_tool_call_constraint(const ServerContext& ctx,
                                                                   const nlohmann::ordered_json& tools,
                                                                   const std::string& forced_name,
                                                                   const ReasoningPrefix& reasoning,
                                                                   std::vector<std::string>* ignored);

// The grammar behind make_tool_call_constraint, for a model whose tool-call
// syntax is `format` and whose chat template is `chat_template` (GLM: which
// layout). The XML formats (Qwen3CoderXml, Glm45Xml) write each property of
// the tool's schema in the schema's order, the required ones always and the
// optional ones maybe (then any required name without a property, as text):
// a value whose schema allows a string is raw text that contains neither its
// closing tag nor </tool_call> (a string enum / const: exactly those texts;
// minLength, maxLength, pattern and format are then reported unenforced);
// any other value is the JSON of its schema. Parsed back by the OutputParser
// with the same tools' ToolParameterTypes, the arguments validate.
grammar::Grammar tool_call_grammar(text::ToolCallFormat format, const std::string& chat_template,
                                   const nlohmann::ordered_json& tools, const std::string& forced_name,
                                   const ReasoningPrefix& reasoning, std::vector<std::string>* ignored);

// Harmony (gpt-oss) writes its messages' headers with special tokens, which a grammar never
// produces (grammar/vocab_index.h); so a constrained harmony output starts inside a message the
// prompt opens, and the grammar writes only its body:
//   JSON schema                    <|channel|>final<|message|>                       then the JSON value
//   one function (named, or the    <|channel|>commentary to=functions.NAME
//     only one)                        <|constrain|>json<|message|>                  then the arguments
//   any of several functions       nothing: the grammar writes the header as text (the parser reads
//                                  it the same; the analysis is skipped)
// harmony_prompt_lead is that header, for the prompt after its generation prompt ("" for none).
std::string harmony_prompt_lead(const ConstraintSpec& spec);

// The constraint a request's ConstraintSpec asks for (null for Kind::None).
std::shared_ptr<engine::TokenConstraint> make_output_constraint(const ServerContext& ctx, const ConstraintSpec& spec,
                                                                const ReasoningPrefix& reasoning,
                                                                std::vector<std::string>* ignored);

// Schema keywords the grammar could not enforce, reported to the client in
// this response header (ignored_parts.h's header_list_value).
inline constexpr const char* kUnenforcedKeywordsHeader = "x-llmesh-unenforced-schema-keywords";

}  // namespace llmesh::api
