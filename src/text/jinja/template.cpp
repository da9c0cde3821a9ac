#include "text/jinja/template.h"

#include "core/error.h"
#include "text/jinja/ast.h"
#include "text/jinja/builtins.h"
#include "text/jinja/interpreter.h"
#include "text/jinja/lexer.h"
#include "text/jinja/parser.h"

namespace llmesh::text::jinja {

struct Template::Parsed {
  StmtList body;
  ValueDict globals;
};

Template::Template(std::string source, std::string name) : name_(std::move(name)), parsed_(std::make_unique<Parsed>()) {
  try {
    parsed_->body = parse(tokenize(source, name_), name_);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& error) {  // a library exception the parser did not anticipate
    fail("{}: cannot parse template: {}", name_, error.what());
  }
  parsed_->globals = make_globals();
}

Template::~Template() = default;
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;

namespace {

template <typename Json>
std::string render_with(const std::string& name, const StmtList& body, const ValueDict& globals,
                        const RenderLimits& limits, const Json& context) {
  check(context.is_object() || context.is_null(), "{}: the render context must be a JSON object", name);
  ValueDict variables;
  if (context.is_object()) variables = Value::from_json(context).as_dict();
  Interpreter interpreter(name, globals, variables, limits);
  try {
    return interpreter.render(body);
  } catch (const Error&) {
    throw;
  } catch (const RuntimeError& error) {
    fail("{}: {}", name, error.what());
  } catch (const std::exception& error) {  // e.g. a value of an unexpected type reaching a library call
    fail("{}: cannot render template: {}", name, error.what());
  }
}

}  // namespace

std::string Template::render(const nlohmann::json& context) const {
  return render_with(name_, parsed_->body, parsed_->globals, limits_, context);
}

std::string Template::render(const nlohmann::ordered_json& context) const {
  return render_with(name_, parsed_->body, parsed_->globals, limits_, context);
}

}  // namespace llmesh::text::jinja
