#include "text/jinja/interpreter.h"

#include "core/error.h"
#include "text/jinja/builtins.h"

namespace llmesh::text::jinja {
namespace {

constexpr int kMaxCallDepth = 256;  // macro recursion guard

}  // namespace

const Value* Scope::lookup(const std::string& name) const {
  for (const Scope* scope = this; scope; scope = scope->parent_.get()) {
    auto it = scope->variables_.find(name);
    if (it != scope->variables_.end()) return &it->second;
  }
  return nullptr;
}

Interpreter::Interpreter(const std::string& template_name, const ValueDict& globals, const ValueDict& context,
                         const RenderLimits& limits)
    : template_name_(template_name), limits_(limits) {
  auto global_scope = std::make_shared<Scope>(nullptr);
  for (const auto& [name, value] : globals.entries()) global_scope->set(name, value);
  root_ = std::make_shared<Scope>(global_scope);
  for (const auto& [name, value] : context.entries()) root_->set(name, value);
}

std::string Interpreter::render(const StmtList& body) {
  std::string out;
  Flow flow = exec_list(body, out, root_);
  if (flow != Flow::kNormal) fail_at(1, "'break'/'continue' outside of a loop");
  return out;
}

void Interpreter::fail_at(int line, const std::string& message) const {
  fail("{} line {}: {}", template_name_, line, message);
}

void Interpreter::count_iterations(int64_t n) {
  num_iterations_ += n;
  if (num_iterations_ > limits_.max_iterations)
    throw RuntimeError("render limit: more than " + std::to_string(limits_.max_iterations) +
                       " loop iterations and macro calls (RenderLimits::max_iterations)");
}

void Interpreter::check_output(const std::string& text) const {
  if (static_cast<int64_t>(text.size()) > limits_.max_output_bytes)
    throw RuntimeError("render limit: output longer than " + std::to_string(limits_.max_output_bytes) +
                       " bytes (RenderLimits::max_output_bytes)");
}

const Value& Interpreter::check_size(const Value& value) const {
  if (value.is_string() && static_cast<int64_t>(value.as_string().size()) > limits_.max_output_bytes)
    throw RuntimeError("render limit: a string longer than " + std::to_string(limits_.max_output_bytes) +
                       " bytes (RenderLimits::max_output_bytes)");
  if (value.is_list() && static_cast<int64_t>(value.as_list().size()) > limits_.max_list_items)
    throw RuntimeError("render limit: a list of more than " + std::to_string(limits_.max_list_items) +
                       " items (RenderLimits::max_list_items)");
  return value;
}

// ---- statements ----

Interpreter::Flow Interpreter::exec_list(const StmtList& body, std::string& out, const std::shared_ptr<Scope>& scope) {
  for (const StmtPtr& stmt : body) {
    Flow flow = exec(*stmt, out, scope);
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

Interpreter::Flow Interpreter::exec(const Stmt& stmt, std::string& out, const std::shared_ptr<Scope>& scope) {
  try {
    switch (stmt.kind) {
      case Stmt::Kind::kOutput:
        if (stmt.expr) out += eval(*stmt.expr, scope).str();
        else out += stmt.text;
        check_output(out);
        return Flow::kNormal;
      case Stmt::Kind::kIf:
        for (const auto& [condition, body] : stmt.branches)
          if (!condition || eval(*condition, scope).truthy()) return exec_list(body, out, scope);
        return Flow::kNormal;
      case Stmt::Kind::kFor: return exec_for(stmt, out, scope);
      case Stmt::Kind::kSet:
        if (stmt.expr) {
          exec_set(stmt, scope, eval(*stmt.expr, scope));
        } else {
          std::string captured;
          if (exec_list(stmt.body, captured, scope) != Flow::kNormal) fail_at(stmt.line, "'break'/'continue' in a set block");
          exec_set(stmt, scope, Value(std::move(captured)));
        }
        return Flow::kNormal;
      case Stmt::Kind::kMacro: scope->set(stmt.text, make_macro(stmt, scope)); return Flow::kNormal;
      case Stmt::Kind::kCallBlock: {
        const Expr& call = *stmt.expr;
        Value callee = eval(*call.operand, scope);
        if (!callee.is_function()) fail_at(stmt.line, "'" + callee.type_name() + "' object is not callable");
        CallArgs args = eval_args(call, scope);
        args.keyword.emplace_back("caller", make_caller(stmt, scope));
        out += callee.as_function()(args).str();
        check_output(out);
        return Flow::kNormal;
      }
      case Stmt::Kind::kFilterBlock: {
        std::string captured;
        if (exec_list(stmt.body, captured, scope) != Flow::kNormal) fail_at(stmt.line, "'break'/'continue' in a filter block");
        out += apply_filter_chain(*stmt.expr, Value(std::move(captured)), scope).str();
        check_output(out);
        return Flow::kNormal;
      }
      case Stmt::Kind::kBreak: return Flow::kBreak;
      case Stmt::Kind::kContinue: return Flow::kContinue;
      case Stmt::Kind::kScoped: return exec_list(stmt.body, out, scope);
      case Stmt::Kind::kWith: {
        auto inner = std::make_shared<Scope>(scope);
        for (const StmtPtr& assignment : stmt.else_body)
          inner->set(assignment->target.names[0], eval(*assignment->expr, scope));
        return exec_list(stmt.body, out, inner);
      }
    }
  } catch (const RuntimeError& error) {
    fail_at(stmt.line, error.what());
  }
  return Flow::kNormal;
}

void Interpreter::bind_target(const Target& target, const Value& value, Scope& scope, int line) {
  if (target.names.size() == 1) {
    scope.set(target.names[0], value);
    return;
  }
  ValueList items = iterate(value);
  if (items.size() != target.names.size())
    fail_at(line, "cannot unpack " + std::to_string(items.size()) + " values into " +
                      std::to_string(target.names.size()) + " names");
  for (size_t i = 0; i < items.size(); ++i) scope.set(target.names[i], items[i]);
}

void Interpreter::exec_set(const Stmt& stmt, const std::shared_ptr<Scope>& scope, Value value) {
  if (!stmt.target.attribute.empty()) {
    const Value* object = scope->lookup(stmt.target.names[0]);
    if (!object || !object->is_namespace())
      fail_at(stmt.line, "can only assign an attribute of a namespace object ('" + stmt.target.names[0] + "')");
    check_storable(&object->as_dict(), value);
    object->as_dict().set(stmt.target.attribute, std::move(value));
    return;
  }
  bind_target(stmt.target, value, *scope, stmt.line);
}

Interpreter::Flow Interpreter::exec_for(const Stmt& stmt, std::string& out, const std::shared_ptr<Scope>& scope) {
  ValueList items = iterate(eval(*stmt.expr, scope));
  count_iterations(static_cast<int64_t>(items.size()));  // all of them up front: building them was the work
  if (stmt.condition) {  // `for x in xs if cond` filters before loop.index is counted
    ValueList kept;
    for (const Value& item : items) {
      auto filter_scope = std::make_shared<Scope>(scope);
      bind_target(stmt.target, item, *filter_scope, stmt.line);
      if (eval(*stmt.condition, filter_scope).truthy()) kept.push_back(item);
    }
    items = std::move(kept);
  }
  if (items.empty()) return exec_list(stmt.else_body, out, scope);

  int64_t length = static_cast<int64_t>(items.size());
  for (int64_t i = 0; i < length; ++i) {
    auto iteration_scope = std::make_shared<Scope>(scope);
    bind_target(stmt.target, items[i], *iteration_scope, stmt.line);
    ValueDict loop;
    loop.set("index", Value(i + 1));
    loop.set("index0", Value(i));
    loop.set("revindex", Value(length - i));
    loop.set("revindex0", Value(length - i - 1));
    loop.set("first", Value(i == 0));
    loop.set("last", Value(i == length - 1));
    loop.set("length", Value(length));
    loop.set("depth", Value(int64_t{1}));
    loop.set("depth0", Value(int64_t{0}));
    loop.set("previtem", i > 0 ? items[i - 1] : Value::undefined("there is no previous item"));
    loop.set("nextitem", i + 1 < length ? items[i + 1] : Value::undefined("there is no next item"));
    loop.set("cycle", Value(Function([i](const CallArgs& args) {
               if (args.positional.empty()) throw RuntimeError("no items for cycling given");
               return args.positional[static_cast<size_t>(i) % args.positional.size()];
             })));
    iteration_scope->set("loop", Value::make_namespace(std::move(loop)));
    Flow flow = exec_list(stmt.body, out, iteration_scope);
    if (flow == Flow::kBreak) break;
  }
  return Flow::kNormal;
}

Value Interpreter::make_macro(const Stmt& stmt, const std::shared_ptr<Scope>& scope) {
  const Stmt* macro = &stmt;
  // A weak reference: the defining scope holds the macro, so a strong one would be a cycle.
  std::weak_ptr<Scope> weak_scope = scope;
  return Value(Function([this, macro, weak_scope](const CallArgs& args) {
    if (call_depth_ >= kMaxCallDepth) throw RuntimeError("macro recursion too deep in '" + macro->text + "'");
    count_iterations(1);
    std::shared_ptr<Scope> defining_scope = weak_scope.lock();
    if (!defining_scope) throw RuntimeError("macro '" + macro->text + "' called after its scope ended");
    auto call_scope = std::make_shared<Scope>(defining_scope);
    if (args.positional.size() > macro->params.size())
      throw RuntimeError("macro '" + macro->text + "' takes not more than " + std::to_string(macro->params.size()) +
                         " argument(s)");
    for (size_t i = 0; i < macro->params.size(); ++i) {
      const MacroParam& param = macro->params[i];
      const Value* passed = args.get(i, param.name);
      if (passed) call_scope->set(param.name, *passed);
      else if (param.default_value) call_scope->set(param.name, eval(*param.default_value, call_scope));
      else call_scope->set(param.name, Value::undefined("parameter '" + param.name + "' was not provided"));
    }
    for (const auto& [key, value] : args.keyword) {
      bool known = key == "caller";
      for (const MacroParam& param : macro->params) known = known || param.name == key;
      if (!known) throw RuntimeError("macro '" + macro->text + "' takes no keyword argument '" + key + "'");
      if (key == "caller") call_scope->set("caller", value);
    }
    ++call_depth_;
    std::string rendered;
    try {
      exec_list(macro->body, rendered, call_scope);
    } catch (...) {
      --call_depth_;
      throw;
    }
    --call_depth_;
    return Value(std::move(rendered));
  }));
}

Value Interpreter::make_caller(const Stmt& stmt, const std::shared_ptr<Scope>& scope) {
  const Stmt* block = &stmt;
  return Value(Function([this, block, scope](const CallArgs& args) {
    if (call_depth_ >= kMaxCallDepth) throw RuntimeError("caller() recursion too deep");
    count_iterations(1);
    auto call_scope = std::make_shared<Scope>(scope);
    for (size_t i = 0; i < block->params.size(); ++i) {
      const MacroParam& param = block->params[i];
      const Value* passed = args.get(i, param.name);
      if (passed) call_scope->set(param.name, *passed);
      else if (param.default_value) call_scope->set(param.name, eval(*param.default_value, call_scope));
      else call_scope->set(param.name, Value::undefined("parameter '" + param.name + "' was not provided"));
    }
    ++call_depth_;
    std::string rendered;
    try {
      exec_list(block->body, rendered, call_scope);
    } catch (...) {
      --call_depth_;
      throw;
    }
    --call_depth_;
    return Value(std::move(rendered));
  }));
}

// ---- expressions ----

Value Interpreter::eval(const Expr& expr, const std::shared_ptr<Scope>& scope) {
  try {
    Value value = eval_unchecked(expr, scope);
    check_size(value);
    return value;
  } catch (const RuntimeError& error) {
    fail_at(expr.line, error.what());
  }
}

CallArgs Interpreter::eval_args(const Expr& expr, const std::shared_ptr<Scope>& scope) {
  CallArgs args;
  for (const ExprPtr& item : expr.items) args.positional.push_back(eval(*item, scope));
  for (const auto& [key, value] : expr.keywords) args.keyword.emplace_back(key, eval(*value, scope));
  return args;
}

Value Interpreter::apply_filter_chain(const Expr& filter, const Value& input, const std::shared_ptr<Scope>& scope) {
  Value value = filter.operand ? apply_filter_chain(*filter.operand, input, scope) : input;
  return apply_filter(filter.name, value, eval_args(filter, scope));
}

Value Interpreter::eval_unchecked(const Expr& expr, const std::shared_ptr<Scope>& scope) {
  switch (expr.kind) {
    case Expr::Kind::kLiteral: return expr.value;
    case Expr::Kind::kName: {
      const Value* found = scope->lookup(expr.name);
      return found ? *found : Value::undefined("'" + expr.name + "' is undefined");
    }
    case Expr::Kind::kList:
    case Expr::Kind::kTuple: {
      ValueList items;
      for (const ExprPtr& item : expr.items) items.push_back(eval(*item, scope));
      return expr.kind == Expr::Kind::kTuple ? Value::make_tuple(std::move(items)) : Value(std::move(items));
    }
    case Expr::Kind::kDict: {
      ValueDict dict;
      for (size_t i = 0; i + 1 < expr.items.size(); i += 2) {
        Value key = eval(*expr.items[i], scope);
        if (!key.is_string()) throw RuntimeError("unsupported construct: dict literal with a non-string key");
        dict.set(key.as_string(), eval(*expr.items[i + 1], scope));
      }
      return Value(std::move(dict));
    }
    case Expr::Kind::kAttribute: return get_attribute(eval(*expr.operand, scope), expr.name);
    case Expr::Kind::kSubscript: return get_item(eval(*expr.operand, scope), eval(*expr.items[0], scope));
    case Expr::Kind::kSlice: {
      Value object = eval(*expr.operand, scope);
      Value parts[3];
      for (int i = 0; i < 3; ++i)
        if (expr.items[i]) parts[i] = eval(*expr.items[i], scope);
      return slice(object, parts[0], parts[1], parts[2]);
    }
    case Expr::Kind::kCall: {
      Value callee = eval(*expr.operand, scope);
      if (callee.is_undefined()) fail_undefined(callee);
      if (!callee.is_function()) throw RuntimeError("'" + callee.type_name() + "' object is not callable");
      return callee.as_function()(eval_args(expr, scope));
    }
    case Expr::Kind::kFilter: {
      Value value = eval(*expr.operand, scope);
      return apply_filter(expr.name, value, eval_args(expr, scope));
    }
    case Expr::Kind::kTest: {
      Value value = eval(*expr.operand, scope);
      bool passed = apply_test(expr.name, value, eval_args(expr, scope));
      return Value(expr.negated ? !passed : passed);
    }
    case Expr::Kind::kUnary: {
      Value operand = eval(*expr.operand, scope);
      if (expr.name == "not") return Value(!operand.truthy());
      if (expr.name == "-") return negate(operand);
      if (operand.is_undefined()) fail_undefined(operand);
      if (!operand.is_number()) throw RuntimeError("bad operand type for unary +: '" + operand.type_name() + "'");
      return operand.is_bool() ? Value(operand.as_int()) : operand;
    }
    case Expr::Kind::kBinary: {
      Value left = eval(*expr.operand, scope);
      if (expr.name == "and") return left.truthy() ? eval(*expr.items[0], scope) : left;
      if (expr.name == "or") return left.truthy() ? left : eval(*expr.items[0], scope);
      return binary_op(expr.name, left, eval(*expr.items[0], scope));
    }
    case Expr::Kind::kCompare: {
      Value left = eval(*expr.operand, scope);
      for (size_t i = 0; i < expr.ops.size(); ++i) {
        Value right = eval(*expr.items[i], scope);
        if (!compare_op(expr.ops[i], left, right)) return Value(false);
        left = std::move(right);
      }
      return Value(true);
    }
    case Expr::Kind::kConditional:
      if (eval(*expr.operand, scope).truthy()) return eval(*expr.items[0], scope);
      if (expr.items[1]) return eval(*expr.items[1], scope);
      return Value::undefined("the inline if-expression evaluated to false and no else section was defined");
  }
  throw RuntimeError("unknown expression");
}

}  // namespace llmesh::text::jinja
