#include "text/jinja/lexer.h"

#include <cctype>
#include <cstring>

#include "core/error.h"
#include "text/jinja/unicode.h"

namespace llmesh::text::jinja {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  Lexer(std::string source, const std::string& template_name) : source_(std::move(source)), name_(template_name) {}

  std::vector<Token> run() {
    while (pos_ < source_.size()) {
      size_t tag_pos = find_next_tag(pos_);
      if (tag_pos == std::string::npos) {
        emit_data(source_.substr(pos_));
        pos_ = source_.size();
        break;
      }
      char kind = source_[tag_pos + 1];  // '{', '%' or '#'
      char modifier = tag_pos + 2 < source_.size() ? source_[tag_pos + 2] : '\0';
      std::string data = source_.substr(pos_, tag_pos - pos_);
      if (modifier == '-') {
        size_t keep = data.size();
        while (keep > 0 && is_space(data[keep - 1])) --keep;
        data.resize(keep);
      } else if (modifier != '+' && kind != '{') {
        lstrip_line(data, pos_);
      }
      emit_data(data);
      pos_ = tag_pos + 2 + ((modifier == '-' || modifier == '+') ? 1 : 0);
      if (kind == '#') {
        lex_comment();
      } else {
        lex_tag(kind == '{');
      }
    }
    tokens_.push_back({TokenType::kEnd, "", line_});
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void error(const std::string& message) const { fail("{} line {}: {}", name_, line_, message); }

  size_t find_next_tag(size_t from) const {
    size_t at = from;
    while (true) {
      at = source_.find('{', at);
      if (at == std::string::npos || at + 1 >= source_.size()) return std::string::npos;
      char next = source_[at + 1];
      if (next == '{' || next == '%' || next == '#') return at;
      ++at;
    }
  }

  // lstrip_blocks: drop spaces/tabs between the line start and a block/comment tag.
  void lstrip_line(std::string& data, size_t data_start) const {
    size_t line_start = data.rfind('\n');
    line_start = line_start == std::string::npos ? 0 : line_start + 1;
    bool at_line_start = line_start > 0 || data_start == 0 || source_[data_start - 1] == '\n';
    if (!at_line_start) return;
    for (size_t i = line_start; i < data.size(); ++i)
      if (data[i] != ' ' && data[i] != '\t') return;
    data.resize(line_start);
  }

  void emit_data(const std::string& data) {
    if (!data.empty()) tokens_.push_back({TokenType::kData, data, line_});
    for (char c : data) line_ += c == '\n';
  }

  void advance_to(size_t new_pos) {
    for (size_t i = pos_; i < new_pos && i < source_.size(); ++i) line_ += source_[i] == '\n';
    pos_ = new_pos;
  }

  // After a tag: `-` strips all following whitespace; trim_blocks drops one newline.
  void after_tag_end(char modifier, bool is_block_or_comment) {
    if (modifier == '-') {
      size_t end = pos_;
      while (end < source_.size() && is_space(source_[end])) ++end;
      advance_to(end);
    } else if (modifier != '+' && is_block_or_comment && pos_ < source_.size() && source_[pos_] == '\n') {
      advance_to(pos_ + 1);
    }
  }

  void lex_comment() {
    size_t end = source_.find("#}", pos_);
    if (end == std::string::npos) error("missing end of comment tag '#}'");
    char modifier = end > pos_ && (source_[end - 1] == '-' || source_[end - 1] == '+') ? source_[end - 1] : '\0';
    advance_to(end + 2);
    after_tag_end(modifier, true);
  }

  void lex_tag(bool is_variable) {
    tokens_.push_back({is_variable ? TokenType::kVariableBegin : TokenType::kBlockBegin, "", line_});
    const char* close = is_variable ? "}}" : "%}";
    int brace_depth = 0;
    while (true) {
      while (pos_ < source_.size() && is_space(source_[pos_])) advance_to(pos_ + 1);
      if (pos_ >= source_.size()) error(is_variable ? "unexpected end of template, expected '}}'" : "unexpected end of template, expected '%}'");
      if (brace_depth == 0) {
        char c = source_[pos_];
        if ((c == '-' || c == '+') && source_.compare(pos_ + 1, 2, close) == 0) {
          tokens_.push_back({is_variable ? TokenType::kVariableEnd : TokenType::kBlockEnd, "", line_});
          advance_to(pos_ + 3);
          after_tag_end(c, !is_variable);
          return;
        }
        if (source_.compare(pos_, 2, close) == 0) {
          tokens_.push_back({is_variable ? TokenType::kVariableEnd : TokenType::kBlockEnd, "", line_});
          advance_to(pos_ + 2);
          after_tag_end('\0', !is_variable);
          return;
        }
      }
      char c = source_[pos_];
      if (c == '"' || c == '\'') {
        lex_string();
      } else if (is_digit(c)) {
        lex_number();
      } else if (is_name_start(c)) {
        size_t end = pos_;
        while (end < source_.size() && is_name_char(source_[end])) ++end;
        tokens_.push_back({TokenType::kName, source_.substr(pos_, end - pos_), line_});
        advance_to(end);
      } else {
        static const char* kTwoCharOperators[] = {"//", "**", "==", "!=", "<=", ">="};
        std::string op;
        for (const char* candidate : kTwoCharOperators)
          if (source_.compare(pos_, 2, candidate) == 0) op = candidate;
        if (op.empty()) {
          if (!std::strchr("+-/*%~[](){}<>=.:|,;", c)) error(std::string("unexpected character '") + c + "'");
          op = std::string(1, c);
        }
        if (op == "{" || op == "[" || op == "(") ++brace_depth;
        if (op == "}" || op == "]" || op == ")") brace_depth = brace_depth > 0 ? brace_depth - 1 : 0;
        tokens_.push_back({TokenType::kOperator, op, line_});
        advance_to(pos_ + op.size());
      }
    }
  }

  void lex_number() {
    size_t end = pos_;
    auto digits = [&](size_t at) {
      size_t i = at;
      while (i < source_.size() && (is_digit(source_[i]) || (source_[i] == '_' && i + 1 < source_.size() && is_digit(source_[i + 1]))))
        ++i;
      return i;
    };
    end = digits(end);
    bool is_float = false;
    if (end + 1 < source_.size() && source_[end] == '.' && is_digit(source_[end + 1])) {
      is_float = true;
      end = digits(end + 1);
    }
    if (end < source_.size() && (source_[end] == 'e' || source_[end] == 'E')) {
      size_t exp = end + 1;
      if (exp < source_.size() && (source_[exp] == '+' || source_[exp] == '-')) ++exp;
      if (exp < source_.size() && is_digit(source_[exp])) {
        is_float = true;
        end = digits(exp);
      }
    }
    std::string text;
    for (size_t i = pos_; i < end; ++i)
      if (source_[i] != '_') text.push_back(source_[i]);
    tokens_.push_back({is_float ? TokenType::kFloat : TokenType::kInteger, text, line_});
    advance_to(end);
  }

  // Python string literal escapes (jinja2 decodes literals with 'unicode-escape').
  void lex_string() {
    char quote = source_[pos_];
    int start_line = line_;
    size_t i = pos_ + 1;
    std::string value;
    while (true) {
      if (i >= source_.size()) error("unexpected end of string literal");
      char c = source_[i];
      if (c == quote) break;
      if (c != '\\') {
        value.push_back(c);
        ++i;
        continue;
      }
      if (i + 1 >= source_.size()) error("unexpected end of string literal");
      char escape = source_[i + 1];
      i += 2;
      auto hex_escape = [&](int num_digits) {
        if (i + num_digits > source_.size()) error("truncated \\x/\\u escape in string literal");
        for (int k = 0; k < num_digits; ++k)
          if (!std::isxdigit(static_cast<unsigned char>(source_[i + k]))) error("invalid \\x/\\u escape in string literal");
        char32_t code_point = static_cast<char32_t>(std::stoul(source_.substr(i, num_digits), nullptr, 16));
        if (code_point > 0x10FFFF) error("invalid \\U escape in string literal");
        utf8_append(value, code_point);
        i += num_digits;
      };
      switch (escape) {
        case 'n': value.push_back('\n'); break;
        case 't': value.push_back('\t'); break;
        case 'r': value.push_back('\r'); break;
        case '\\': value.push_back('\\'); break;
        case '\'': value.push_back('\''); break;
        case '"': value.push_back('"'); break;
        case 'a': value.push_back('\a'); break;
        case 'b': value.push_back('\b'); break;
        case 'f': value.push_back('\f'); break;
        case 'v': value.push_back('\v'); break;
        case '\n': break;  // line continuation
        case 'x': hex_escape(2); break;
        case 'u': hex_escape(4); break;
        case 'U': hex_escape(8); break;
        default:
          if (escape >= '0' && escape <= '7') {
            int code = escape - '0';
            for (int k = 0; k < 2 && i < source_.size() && source_[i] >= '0' && source_[i] <= '7'; ++k, ++i)
              code = code * 8 + (source_[i] - '0');
            utf8_append(value, static_cast<char32_t>(code));
          } else {
            value.push_back('\\');
            value.push_back(escape);
          }
      }
    }
    tokens_.push_back({TokenType::kString, value, start_line});
    advance_to(i + 1);
  }

  std::string source_;
  const std::string& name_;
  size_t pos_ = 0;
  int line_ = 1;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(const std::string& source, const std::string& template_name) {
  // jinja2 normalizes newlines to "\n" and drops one trailing newline.
  std::string normalized;
  normalized.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      normalized.push_back('\n');
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      normalized.push_back(source[i]);
    }
  }
  if (!normalized.empty() && normalized.back() == '\n') normalized.pop_back();
  return Lexer(std::move(normalized), template_name).run();
}

}  // namespace llmesh::text::jinja
