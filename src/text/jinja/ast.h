// The syntax tree the parser builds and the interpreter walks. Every node
// keeps the template line it starts on, for error messages.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "text/jinja/value.h"

namespace llmesh::text::jinja {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using StmtList = std::vector<StmtPtr>;

struct Expr {
  enum class Kind {
    kLiteral,      // value
    kName,         // name
    kList,         // items
    kTuple,        // items (evaluates to a list)
    kDict,         // keys/items pairs: items[2k] key, items[2k+1] value
    kAttribute,    // operand.name
    kSubscript,    // operand[items[0]]
    kSlice,        // operand[items[0]:items[1]:items[2]] (null parts allowed)
    kCall,         // operand(items..., keywords)
    kFilter,       // operand | name(items..., keywords); operand null in a filter block
    kTest,         // operand is [not] name(items...)
    kUnary,        // op operand   ("not", "-", "+")
    kBinary,       // operand op items[0]   (arithmetic, ~, and, or)
    kCompare,      // operand (ops[i] items[i])...   (chained)
    kConditional,  // items[0] if operand else items[1] (items[1] may be null)
  };

  Kind kind;
  int line;
  Value value;                // kLiteral
  std::string name;           // kName, kAttribute, kFilter, kTest; operator for kUnary/kBinary
  bool negated = false;       // kTest: "is not"
  ExprPtr operand;
  std::vector<ExprPtr> items;
  std::vector<std::pair<std::string, ExprPtr>> keywords;  // kCall, kFilter, kTest
  std::vector<std::string> ops;                           // kCompare

  Expr(Kind kind_, int line_) : kind(kind_), line(line_) {}
};

// A for-loop or set target: a name, a tuple of names, or `namespace.attribute`.
struct Target {
  std::vector<std::string> names;  // one name, or several for tuple unpacking
  std::string attribute;           // set ns.attribute: names[0] is the namespace
};

struct MacroParam {
  std::string name;
  ExprPtr default_value;  // null when required
};

struct Stmt {
  enum class Kind {
    kOutput,    // text, or {{ expr }}
    kIf,        // branches: (condition, body); a null condition is the else branch
    kFor,       // target in iterable [if condition] body [else else_body]
    kSet,       // target = expr, or a block set: target = rendered body
    kMacro,     // name(params) body
    kCallBlock, // {% call(params) expr %} body
    kFilterBlock,  // {% filter f %} body: expr is a kFilter chain with null innermost operand
    kBreak,
    kContinue,
    kScoped,    // a body rendered in place ({% generation %})
    kWith,      // else_body: the kSet assignments, evaluated in the outer scope; body in a new scope
  };

  Kind kind;
  int line;
  std::string text;  // kOutput literal text when expr is null; kMacro name
  ExprPtr expr;      // kOutput, kSet value, kFor iterable, kCallBlock call
  ExprPtr condition; // kFor filter
  Target target;     // kFor, kSet
  std::vector<std::pair<ExprPtr, StmtList>> branches;  // kIf
  StmtList body;
  StmtList else_body;  // kFor
  std::vector<MacroParam> params;  // kMacro, kCallBlock

  Stmt(Kind kind_, int line_) : kind(kind_), line(line_) {}
};

}  // namespace llmesh::text::jinja
