// Recursive-descent parser for the jinja2 subset chat templates use, with
// jinja2's operator precedence (lowest first):
//   x if c else y  <  or  <  and  <  not  <  comparisons/in  <  + -  <  ~
//   <  * / // %  <  **  <  unary -  <  filters |, tests `is`, calls, . [] 
#pragma once

#include <string>
#include <vector>

#include "text/jinja/ast.h"
#include "text/jinja/lexer.h"

namespace llmesh::text::jinja {

// Throws llmesh::Error "<template_name> line N: ..." on a syntax error or an
// unsupported tag.
StmtList parse(const std::vector<Token>& tokens, const std::string& template_name);

}  // namespace llmesh::text::jinja
