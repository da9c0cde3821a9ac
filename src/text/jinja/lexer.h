// Splits a template into tokens, applying jinja2's whitespace rules the way
// HF transformers configures them for chat templates:
//   trim_blocks    the first newline after a block or comment tag is removed
//   lstrip_blocks  spaces/tabs from the start of a line up to a block or
//                  comment tag are removed
//   {%- / -%}      all whitespace before / after the tag is removed
//   {%+ / +%}      disables lstrip_blocks / trim_blocks for that tag
// and with keep_trailing_newline off (one trailing newline of the source is dropped).
#pragma once

#include <string>
#include <vector>

namespace llmesh::text::jinja {

enum class TokenType {
  kData,           // literal template text
  kVariableBegin,  // {{
  kVariableEnd,    // }}
  kBlockBegin,     // {%
  kBlockEnd,       // %}
  kName,
  kString,  // value already unescaped
  kInteger,
  kFloat,
  kOperator,
  kEnd,
};

struct Token {
  TokenType type;
  std::string value;
  int line;
};

// Throws llmesh::Error "<template_name> line N: ..." on a lexical error.
std::vector<Token> tokenize(const std::string& source, const std::string& template_name);

}  // namespace llmesh::text::jinja
