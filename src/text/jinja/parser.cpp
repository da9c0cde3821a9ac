#include "text/jinja/parser.h"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>

#include "core/error.h"

namespace llmesh::text::jinja {
namespace {

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, const std::string& name) : tokens_(tokens), name_(name) {}

  StmtList parse_template() {
    StmtList body = parse_body({});
    if (peek().type != TokenType::kEnd) error_at(peek(), "unexpected '" + describe(peek(1)) + "'");
    return body;
  }

 private:
  // ---- token helpers ----
  const Token& peek(size_t ahead = 0) const {
    size_t at = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[at];
  }
  const Token& next() {
    const Token& token = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return token;
  }
  bool at_operator(const char* op, size_t ahead = 0) const {
    return peek(ahead).type == TokenType::kOperator && peek(ahead).value == op;
  }
  bool at_name(const char* name, size_t ahead = 0) const {
    return peek(ahead).type == TokenType::kName && peek(ahead).value == name;
  }
  static std::string describe(const Token& token) {
    switch (token.type) {
      case TokenType::kVariableEnd: return "}}";
      case TokenType::kBlockEnd: return "%}";
      case TokenType::kVariableBegin: return "{{";
      case TokenType::kBlockBegin: return "{%";
      case TokenType::kEnd: return "end of template";
      case TokenType::kData: return "text";
      default: return token.value;
    }
  }
  [[noreturn]] void error_at(const Token& token, const std::string& message) const {
    fail("{} line {}: {}", name_, token.line, message);
  }
  void expect_operator(const char* op) {
    if (!at_operator(op)) error_at(peek(), std::string("expected '") + op + "', got '" + describe(peek()) + "'");
    next();
  }
  void expect_block_end() {
    if (peek().type != TokenType::kBlockEnd) error_at(peek(), "expected end of statement '%}', got '" + describe(peek()) + "'");
    next();
  }
  std::string expect_name() {
    if (peek().type != TokenType::kName) error_at(peek(), "expected a name, got '" + describe(peek()) + "'");
    return next().value;
  }

  // ---- statements ----

  // Parses until a block tag whose keyword is in `end_tags` (left unconsumed:
  // positioned on its `{%`), or the end of the template.
  StmtList parse_body(std::initializer_list<const char*> end_tags) {
    StmtList body;
    while (true) {
      const Token& token = peek();
      if (token.type == TokenType::kEnd) {
        if (end_tags.size() != 0)
          error_at(token, std::string("unexpected end of template, expected '") + *end_tags.begin() + "'");
        return body;
      }
      if (token.type == TokenType::kData) {
        auto stmt = std::make_unique<Stmt>(Stmt::Kind::kOutput, token.line);
        stmt->text = token.value;
        body.push_back(std::move(stmt));
        next();
      } else if (token.type == TokenType::kVariableBegin) {
        next();
        auto stmt = std::make_unique<Stmt>(Stmt::Kind::kOutput, token.line);
        stmt->expr = parse_tuple_or_expression();
        if (peek().type != TokenType::kVariableEnd) error_at(peek(), "expected '}}', got '" + describe(peek()) + "'");
        next();
        body.push_back(std::move(stmt));
      } else if (token.type == TokenType::kBlockBegin) {
        const Token& keyword = peek(1);
        if (keyword.type == TokenType::kName) {
          for (const char* end_tag : end_tags)
            if (keyword.value == end_tag) return body;
        }
        next();
        body.push_back(parse_statement());
      } else {
        error_at(token, "unexpected '" + describe(token) + "'");
      }
    }
  }

  // Consumes `{% name %}` for an end/else tag.
  void expect_tag(const char* name) {
    next();  // {%
    if (!at_name(name)) error_at(peek(), std::string("expected '") + name + "'");
    next();
    expect_block_end();
  }

  StmtPtr parse_statement() {
    struct DepthGuard {
      int& depth;
      explicit DepthGuard(int& d) : depth(d) { ++depth; }
      ~DepthGuard() { --depth; }
    } guard(block_depth_);
    if (block_depth_ > kMaxBlockDepth) error_at(peek(), "blocks nested too deeply");
    const Token& keyword = peek();
    if (keyword.type != TokenType::kName) error_at(keyword, "expected a statement keyword, got '" + describe(keyword) + "'");
    const std::string& word = keyword.value;
    int line = keyword.line;
    next();
    if (word == "if") return parse_if(line);
    if (word == "for") return parse_for(line);
    if (word == "set") return parse_set(line);
    if (word == "macro") return parse_macro(line);
    if (word == "call") return parse_call_block(line);
    if (word == "filter") return parse_filter_block(line);
    if (word == "break" || word == "continue") {
      expect_block_end();
      return std::make_unique<Stmt>(word == "break" ? Stmt::Kind::kBreak : Stmt::Kind::kContinue, line);
    }
    if (word == "with") return parse_with(line);
    if (word == "generation") {  // HF's assistant-mask extension: renders its body
      expect_block_end();
      auto stmt = std::make_unique<Stmt>(Stmt::Kind::kScoped, line);
      stmt->body = parse_body({"endgeneration"});
      expect_tag("endgeneration");
      return stmt;
    }
    static const char* kKnownEnds[] = {"endif", "endfor", "endset", "endmacro", "endcall", "endfilter", "elif", "else", "endgeneration", "endwith"};
    for (const char* end : kKnownEnds)
      if (word == end) error_at(keyword, "unexpected '" + word + "' tag");
    error_at(keyword, "unsupported tag '" + word + "'");
  }

  // {% with a = 1, b = 2 %}...{% endwith %}: a scope with its own variables.
  StmtPtr parse_with(int line) {
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::kWith, line);
    while (peek().type != TokenType::kBlockEnd) {
      auto assignment = std::make_unique<Stmt>(Stmt::Kind::kSet, peek().line);
      assignment->target.names.push_back(expect_name());
      expect_operator("=");
      assignment->expr = parse_expression();
      stmt->else_body.push_back(std::move(assignment));
      if (!at_operator(",")) break;
      next();
    }
    expect_block_end();
    stmt->body = parse_body({"endwith"});
    expect_tag("endwith");
    return stmt;
  }

  StmtPtr parse_if(int line) {
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::kIf, line);
    ExprPtr condition = parse_expression();
    expect_block_end();
    while (true) {
      StmtList body = parse_body({"elif", "else", "endif"});
      stmt->branches.emplace_back(std::move(condition), std::move(body));
      next();  // {%
      std::string tag = next().value;
      if (tag == "elif") {
        condition = parse_expression();
        expect_block_end();
      } else if (tag == "else") {
        expect_block_end();
        StmtList else_body = parse_body({"endif"});
        stmt->branches.emplace_back(nullptr, std::move(else_body));
        expect_tag("endif");
        return stmt;
      } else {
        expect_block_end();
        return stmt;
      }
    }
  }

  Target parse_names_target() {
    Target target;
    bool parenthesized = at_operator("(");
    if (parenthesized) next();
    target.names.push_back(expect_name());
    while (at_operator(",")) {
      next();
      if (peek().type != TokenType::kName) break;  // trailing comma
      target.names.push_back(expect_name());
    }
    if (parenthesized) expect_operator(")");
    return target;
  }

  StmtPtr parse_for(int line) {
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::kFor, line);
    stmt->target = parse_names_target();
    if (!at_name("in")) error_at(peek(), "expected 'in' in for loop");
    next();
    stmt->expr = parse_or();  // the iterable: `if` after it is the loop filter, not a conditional
    if (at_operator(",")) {  // for x in a, b
      auto tuple = std::make_unique<Expr>(Expr::Kind::kTuple, line);
      tuple->items.push_back(std::move(stmt->expr));
      while (at_operator(",")) {
        next();
        tuple->items.push_back(parse_or());
      }
      stmt->expr = std::move(tuple);
    }
    if (at_name("if")) {
      next();
      stmt->condition = parse_expression();
    }
    if (at_name("recursive")) error_at(peek(), "unsupported construct: recursive for loops");
    expect_block_end();
    stmt->body = parse_body({"else", "endfor"});
    if (at_name("else", 1)) {
      expect_tag("else");
      stmt->else_body = parse_body({"endfor"});
    }
    expect_tag("endfor");
    return stmt;
  }

  StmtPtr parse_set(int line) {
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::kSet, line);
    if (peek().type == TokenType::kName && at_operator(".", 1)) {
      stmt->target.names.push_back(next().value);
      next();
      stmt->target.attribute = expect_name();
    } else {
      stmt->target = parse_names_target();
    }
    if (at_operator("=")) {
      next();
      stmt->expr = parse_tuple_or_expression();
      expect_block_end();
      return stmt;
    }
    if (at_operator("|")) error_at(peek(), "unsupported construct: filtered block set");
    expect_block_end();
    stmt->body = parse_body({"endset"});
    expect_tag("endset");
    return stmt;
  }

  std::vector<MacroParam> parse_params() {
    std::vector<MacroParam> params;
    expect_operator("(");
    while (!at_operator(")")) {
      MacroParam param;
      param.name = expect_name();
      if (at_operator("=")) {
        next();
        param.default_value = parse_expression();
      }
      params.push_back(std::move(param));
      if (!at_operator(",")) break;
      next();
    }
    expect_operator(")");
    return params;
  }

  StmtPtr parse_macro(int line) {
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::kMacro, line);
    stmt->text = expect_name();
    stmt->params = parse_params();
    expect_block_end();
    stmt->body = parse_body({"endmacro"});
    expect_tag("endmacro");
    return stmt;
  }

  StmtPtr parse_call_block(int line) {
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::kCallBlock, line);
    if (at_operator("(")) stmt->params = parse_params();
    stmt->expr = parse_expression();
    if (stmt->expr->kind != Expr::Kind::kCall) error_at(peek(), "expected a call in {% call %}");
    expect_block_end();
    stmt->body = parse_body({"endcall"});
    expect_tag("endcall");
    return stmt;
  }

  StmtPtr parse_filter_block(int line) {
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::kFilterBlock, line);
    ExprPtr chain;
    do {
      if (at_operator("|")) next();
      chain = parse_filter_call(std::move(chain), line);
    } while (at_operator("|"));
    stmt->expr = std::move(chain);
    expect_block_end();
    stmt->body = parse_body({"endfilter"});
    expect_tag("endfilter");
    return stmt;
  }

  // ---- expressions ----

  ExprPtr parse_tuple_or_expression() {
    int line = peek().line;
    ExprPtr first = parse_expression();
    if (!at_operator(",")) return first;
    auto tuple = std::make_unique<Expr>(Expr::Kind::kTuple, line);
    tuple->items.push_back(std::move(first));
    while (at_operator(",")) {
      next();
      if (peek().type == TokenType::kBlockEnd || peek().type == TokenType::kVariableEnd || at_operator(")")) break;
      tuple->items.push_back(parse_expression());
    }
    return tuple;
  }

  ExprPtr parse_expression() {
    // Bounded nesting keeps a hostile template from overflowing the stack.
    struct DepthGuard {
      int& depth;
      explicit DepthGuard(int& d) : depth(d) { ++depth; }
      ~DepthGuard() { --depth; }
    } guard(expression_depth_);
    if (expression_depth_ > kMaxExpressionDepth) error_at(peek(), "expression nested too deeply");
    if (expression_depth_ == 1) num_chained_ops_ = 0;
    ExprPtr expr = parse_or();
    while (at_name("if")) {
      int line = peek().line;
      next();
      auto conditional = std::make_unique<Expr>(Expr::Kind::kConditional, line);
      conditional->operand = parse_or();
      conditional->items.push_back(std::move(expr));
      if (at_name("else")) {
        next();
        conditional->items.push_back(parse_expression());
      } else {
        conditional->items.push_back(nullptr);
      }
      expr = std::move(conditional);
    }
    return expr;
  }

  // Operator, postfix and filter chains build left-deep trees; bounding them per
  // expression bounds the recursion that evaluates (and destroys) the tree.
  void count_chained_op() {
    if (++num_chained_ops_ > kMaxChainedOps) error_at(peek(), "expression too long");
  }

  ExprPtr make_binary(const std::string& op, ExprPtr left, ExprPtr right, int line) {
    count_chained_op();
    auto binary = std::make_unique<Expr>(Expr::Kind::kBinary, line);
    binary->name = op;
    binary->operand = std::move(left);
    binary->items.push_back(std::move(right));
    return binary;
  }

  ExprPtr parse_or() {
    ExprPtr left = parse_and();
    while (at_name("or")) {
      int line = next().line;
      left = make_binary("or", std::move(left), parse_and(), line);
    }
    return left;
  }

  ExprPtr parse_and() {
    ExprPtr left = parse_not();
    while (at_name("and")) {
      int line = next().line;
      left = make_binary("and", std::move(left), parse_not(), line);
    }
    return left;
  }

  ExprPtr parse_not() {
    if (at_name("not")) {
      if (++expression_depth_ > kMaxExpressionDepth) error_at(peek(), "expression nested too deeply");
      int line = next().line;
      auto unary = std::make_unique<Expr>(Expr::Kind::kUnary, line);
      unary->name = "not";
      unary->operand = parse_not();
      --expression_depth_;
      return unary;
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    int line = peek().line;
    ExprPtr left = parse_math1();
    std::unique_ptr<Expr> compare;
    while (true) {
      std::string op;
      if (peek().type == TokenType::kOperator &&
          (peek().value == "==" || peek().value == "!=" || peek().value == "<" || peek().value == "<=" ||
           peek().value == ">" || peek().value == ">=")) {
        op = next().value;
      } else if (at_name("in")) {
        next();
        op = "in";
      } else if (at_name("not") && at_name("in", 1)) {
        next();
        next();
        op = "not in";
      } else {
        break;
      }
      if (!compare) {
        compare = std::make_unique<Expr>(Expr::Kind::kCompare, line);
        compare->operand = std::move(left);
      }
      compare->ops.push_back(op);
      compare->items.push_back(parse_math1());
    }
    if (compare) return compare;
    return left;
  }

  ExprPtr parse_math1() {
    ExprPtr left = parse_concat();
    while (at_operator("+") || at_operator("-")) {
      const Token& op = next();
      left = make_binary(op.value, std::move(left), parse_concat(), op.line);
    }
    return left;
  }

  ExprPtr parse_concat() {
    ExprPtr left = parse_math2();
    while (at_operator("~")) {
      int line = next().line;
      left = make_binary("~", std::move(left), parse_math2(), line);
    }
    return left;
  }

  ExprPtr parse_math2() {
    ExprPtr left = parse_pow();
    while (at_operator("*") || at_operator("/") || at_operator("//") || at_operator("%")) {
      const Token& op = next();
      left = make_binary(op.value, std::move(left), parse_pow(), op.line);
    }
    return left;
  }

  ExprPtr parse_pow() {
    ExprPtr left = parse_unary(true);
    while (at_operator("**")) {
      int line = next().line;
      left = make_binary("**", std::move(left), parse_unary(true), line);
    }
    return left;
  }

  ExprPtr parse_unary(bool with_filter) {
    if (expression_depth_ > kMaxExpressionDepth) error_at(peek(), "expression nested too deeply");
    ExprPtr node;
    if (at_operator("-") || at_operator("+")) {
      const Token& op = next();
      node = std::make_unique<Expr>(Expr::Kind::kUnary, op.line);
      node->name = op.value;
      ++expression_depth_;
      node->operand = parse_unary(false);
      --expression_depth_;
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_expr(std::move(node));
    return node;
  }

  ExprPtr parse_primary() {
    const Token& token = peek();
    switch (token.type) {
      case TokenType::kName: {
        next();
        const std::string& word = token.value;
        auto literal = [&](Value value) {
          auto expr = std::make_unique<Expr>(Expr::Kind::kLiteral, token.line);
          expr->value = std::move(value);
          return expr;
        };
        if (word == "true" || word == "True") return literal(Value(true));
        if (word == "false" || word == "False") return literal(Value(false));
        if (word == "none" || word == "None") return literal(Value::none());
        auto name = std::make_unique<Expr>(Expr::Kind::kName, token.line);
        name->name = word;
        return name;
      }
      case TokenType::kString: {
        std::string text;
        while (peek().type == TokenType::kString) text += next().value;  // adjacent literals concatenate
        auto expr = std::make_unique<Expr>(Expr::Kind::kLiteral, token.line);
        expr->value = Value(std::move(text));
        return expr;
      }
      case TokenType::kInteger: {
        next();
        auto expr = std::make_unique<Expr>(Expr::Kind::kLiteral, token.line);
        try {
          expr->value = Value(static_cast<int64_t>(std::stoll(token.value)));
        } catch (const std::exception&) {
          error_at(token, "integer literal out of range: " + token.value);
        }
        return expr;
      }
      case TokenType::kFloat: {
        next();
        auto expr = std::make_unique<Expr>(Expr::Kind::kLiteral, token.line);
        expr->value = Value(std::strtod(token.value.c_str(), nullptr));  // overflow gives inf, as in Python
        return expr;
      }
      case TokenType::kOperator:
        if (token.value == "(") {
          next();
          if (at_operator(")")) {
            next();
            return std::make_unique<Expr>(Expr::Kind::kTuple, token.line);
          }
          ExprPtr inner = parse_tuple_or_expression();
          expect_operator(")");
          return inner;
        }
        if (token.value == "[") {
          next();
          auto list = std::make_unique<Expr>(Expr::Kind::kList, token.line);
          while (!at_operator("]")) {
            list->items.push_back(parse_expression());
            if (!at_operator(",")) break;
            next();
          }
          expect_operator("]");
          return list;
        }
        if (token.value == "{") {
          next();
          auto dict = std::make_unique<Expr>(Expr::Kind::kDict, token.line);
          while (!at_operator("}")) {
            dict->items.push_back(parse_expression());
            expect_operator(":");
            dict->items.push_back(parse_expression());
            if (!at_operator(",")) break;
            next();
          }
          expect_operator("}");
          return dict;
        }
        break;
      default: break;
    }
    error_at(token, "unexpected '" + describe(token) + "'");
  }

  ExprPtr parse_postfix(ExprPtr node) {
    while (true) {
      if (at_operator(".") || at_operator("[") || at_operator("(")) count_chained_op();
      if (at_operator(".")) {
        int line = next().line;
        const Token& member = peek();
        if (member.type == TokenType::kName) {
          next();
          auto attribute = std::make_unique<Expr>(Expr::Kind::kAttribute, line);
          attribute->name = member.value;
          attribute->operand = std::move(node);
          node = std::move(attribute);
        } else if (member.type == TokenType::kInteger) {
          next();
          auto subscript = std::make_unique<Expr>(Expr::Kind::kSubscript, line);
          auto index = std::make_unique<Expr>(Expr::Kind::kLiteral, line);
          try {
            index->value = Value(static_cast<int64_t>(std::stoll(member.value)));
          } catch (const std::exception&) {
            error_at(member, "integer literal out of range: " + member.value);
          }
          subscript->operand = std::move(node);
          subscript->items.push_back(std::move(index));
          node = std::move(subscript);
        } else {
          error_at(member, "expected an attribute name after '.'");
        }
      } else if (at_operator("[")) {
        node = parse_subscript(std::move(node));
      } else if (at_operator("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr node) {
    int line = next().line;  // [
    ExprPtr parts[3];
    bool is_slice = false;
    if (!at_operator(":")) parts[0] = parse_expression();
    if (at_operator(":")) {
      is_slice = true;
      next();
      if (!at_operator("]") && !at_operator(":")) parts[1] = parse_expression();
      if (at_operator(":")) {
        next();
        if (!at_operator("]")) parts[2] = parse_expression();
      }
    }
    expect_operator("]");
    auto expr = std::make_unique<Expr>(is_slice ? Expr::Kind::kSlice : Expr::Kind::kSubscript, line);
    expr->operand = std::move(node);
    expr->items.push_back(std::move(parts[0]));
    if (is_slice) {
      expr->items.push_back(std::move(parts[1]));
      expr->items.push_back(std::move(parts[2]));
    }
    return expr;
  }

  void parse_call_args(Expr& call) {
    expect_operator("(");
    while (!at_operator(")")) {
      if (at_operator("*") || at_operator("**")) error_at(peek(), "unsupported construct: *args/**kwargs in a call");
      if (peek().type == TokenType::kName && at_operator("=", 1)) {
        std::string key = next().value;
        next();
        call.keywords.emplace_back(key, parse_expression());
      } else {
        call.items.push_back(parse_expression());
      }
      if (!at_operator(",")) break;
      next();
    }
    expect_operator(")");
  }

  ExprPtr parse_call(ExprPtr node) {
    auto call = std::make_unique<Expr>(Expr::Kind::kCall, peek().line);
    call->operand = std::move(node);
    parse_call_args(*call);
    return call;
  }

  ExprPtr parse_filter_call(ExprPtr operand, int line) {
    auto filter = std::make_unique<Expr>(Expr::Kind::kFilter, peek().line);
    filter->name = expect_name();
    while (at_operator(".")) {  // dotted filter names
      next();
      filter->name += "." + expect_name();
    }
    filter->operand = std::move(operand);
    if (at_operator("(")) parse_call_args(*filter);
    return filter;
  }

  ExprPtr parse_filter_expr(ExprPtr node) {
    while (true) {
      if (at_operator("|") || at_name("is") || at_operator("(")) count_chained_op();
      if (at_operator("|")) {
        int line = next().line;
        node = parse_filter_call(std::move(node), line);
      } else if (at_name("is")) {
        node = parse_test(std::move(node));
      } else if (at_operator("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_test(ExprPtr node) {
    int line = next().line;  // is
    auto test = std::make_unique<Expr>(Expr::Kind::kTest, line);
    if (at_name("not")) {
      next();
      test->negated = true;
    }
    test->name = expect_name();
    test->operand = std::move(node);
    const Token& token = peek();
    if (at_operator("(")) {
      parse_call_args(*test);
    } else if ((token.type == TokenType::kName && token.value != "else" && token.value != "or" && token.value != "and") ||
               token.type == TokenType::kString || token.type == TokenType::kInteger || token.type == TokenType::kFloat ||
               at_operator("[") || at_operator("{")) {
      if (at_name("is")) error_at(token, "you cannot chain multiple tests with 'is'");
      test->items.push_back(parse_postfix(parse_primary()));
    }
    return test;
  }

  static constexpr int kMaxExpressionDepth = 200;
  static constexpr int kMaxBlockDepth = 200;
  static constexpr int kMaxChainedOps = 5000;

  const std::vector<Token>& tokens_;
  const std::string& name_;
  size_t pos_ = 0;
  int expression_depth_ = 0;
  int block_depth_ = 0;
  int num_chained_ops_ = 0;
};

}  // namespace

StmtList parse(const std::vector<Token>& tokens, const std::string& template_name) {
  return Parser(tokens, template_name).parse_template();
}

}  // namespace llmesh::text::jinja
