// Walks the syntax tree and writes the output. One Interpreter renders one
// template once; the tree is shared and never modified, so one parsed
// Template can be rendered from many threads at the same time.
//
// Scoping follows jinja2: the template body and `if` blocks share a scope;
// each for-loop iteration, macro call and call-block body gets its own, so a
// `set` inside a loop is not seen after it (templates use namespace() for that).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include "text/jinja/ast.h"
#include "text/jinja/template.h"
#include "text/jinja/value.h"

namespace llmesh::text::jinja {

class Scope {
 public:
  explicit Scope(std::shared_ptr<Scope> parent) : parent_(std::move(parent)) {}
  const Value* lookup(const std::string& name) const;
  void set(const std::string& name, Value value) { variables_[name] = std::move(value); }

 private:
  std::shared_ptr<Scope> parent_;
  std::unordered_map<std::string, Value> variables_;
};

class Interpreter {
 public:
  // `globals` become the outermost scope, `context` the template's own scope.
  Interpreter(const std::string& template_name, const ValueDict& globals, const ValueDict& context,
              const RenderLimits& limits = {});

  std::string render(const StmtList& body);

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  Flow exec_list(const StmtList& body, std::string& out, const std::shared_ptr<Scope>& scope);
  Flow exec(const Stmt& stmt, std::string& out, const std::shared_ptr<Scope>& scope);
  Flow exec_for(const Stmt& stmt, std::string& out, const std::shared_ptr<Scope>& scope);
  void exec_set(const Stmt& stmt, const std::shared_ptr<Scope>& scope, Value value);
  Value make_macro(const Stmt& stmt, const std::shared_ptr<Scope>& scope);
  Value make_caller(const Stmt& stmt, const std::shared_ptr<Scope>& scope);
  void bind_target(const Target& target, const Value& value, Scope& scope, int line);

  Value eval(const Expr& expr, const std::shared_ptr<Scope>& scope);
  Value eval_unchecked(const Expr& expr, const std::shared_ptr<Scope>& scope);
  CallArgs eval_args(const Expr& expr, const std::shared_ptr<Scope>& scope);
  Value apply_filter_chain(const Expr& filter, const Value& input, const std::shared_ptr<Scope>& scope);

  [[noreturn]] void fail_at(int line, const std::string& message) const;
  // Adds n to the iterations used; RuntimeError past RenderLimits::max_iterations.
  void count_iterations(int64_t n);
  // RuntimeError when `text` (output so far, a captured block) is over max_output_bytes.
  void check_output(const std::string& text) const;
  // RuntimeError when a computed string or list is over the limits.
  const Value& check_size(const Value& value) const;

  const std::string& template_name_;
  RenderLimits limits_;
  int64_t num_iterations_ = 0;
  std::shared_ptr<Scope> root_;
  int call_depth_ = 0;
};

}  // namespace llmesh::text::jinja
