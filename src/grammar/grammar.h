// A context-free grammar over bytes, and the combinators that build one.
//
// A Grammar is a list of rules; each rule is a list of alternatives; each
// alternative is a sequence of symbols, a symbol being a ByteSet (matches one
// byte) or another rule. GrammarBuilder offers the usual regular-expression
// style pieces (literal, byte class, sequence, choice, repetition, optional)
// plus text_until(L) — any bytes not containing L, then L — for skipping a
// reasoning block such as `<think> … </think>`. Rules may refer to each other
// recursively (declare_rule / define_rule), e.g. for "any JSON value".
//
// The matcher (grammar_matcher.h) needs no left recursion and no nullable
// repetition body; the combinators never produce either by themselves
// (repeat() of something that matches the empty string is rejected).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/byte_set.h"

namespace llmesh::grammar {

struct Symbol {
  enum class Kind : uint8_t { Bytes, Rule };
  Kind kind = Kind::Rule;
  int32_t index = -1;  // into Grammar::byte_sets (Bytes) or Grammar::rules (Rule)

  bool operator==(const Symbol&) const = default;
};

struct Rule {
  std::string name;
  std::vector<std::vector<Symbol>> alternatives;  // an empty alternative matches the empty string
  bool anonymous = false;                         // made by a combinator: may be spliced into the rule that uses it
};

struct Grammar {
  std::vector<ByteSet> byte_sets;
  std::vector<Rule> rules;
  int32_t root_rule = -1;

  // GBNF-like listing, one rule a line (for debugging and test failure messages).
  std::string to_string() const;
};

inline constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

class GrammarBuilder {
 public:
  Symbol empty();                         // matches ""
  Symbol bytes(const ByteSet& set);       // one byte of the set
  Symbol literal(std::string_view text);  // exactly these bytes
  Symbol sequence(const std::vector<Symbol>& parts);
  Symbol choice(const std::vector<Symbol>& options);
  // item repeated min_count..max_count times (max_count may be kUnbounded).
  // Bounded repetitions expand into max_count - min_count nested optionals.
  Symbol repeat(Symbol item, int64_t min_count, int64_t max_count);
  Symbol optional(Symbol item) { return repeat(item, 0, 1); }
  // Any bytes that do not contain `terminator`, then `terminator` itself.
  Symbol text_until(std::string_view terminator);
  // Same, where the bytes before the terminator also contain none of
  // `forbidden` (a forbidden string inside the terminator itself is fine:
  // text_until("\n</p>", {"</p>"}) ends at "\n</p>" and refuses a "</p>" before it).
  Symbol text_until(std::string_view terminator, const std::vector<std::string>& forbidden);

  // Named rules, for recursion: declare first, use rule(id), define later.
  int32_t declare_rule(std::string name);
  void define_rule(int32_t rule_id, Symbol body);
  Symbol rule(int32_t rule_id) const { return Symbol{Symbol::Kind::Rule, rule_id}; }

  // The finished grammar whose sentences are those of `root`. Error when a
  // declared rule was never defined.
  Grammar build(Symbol root);

  // True when `symbol` can match the empty string (as far as defined so far).
  bool is_nullable(Symbol symbol) const;

 private:
  int32_t new_rule(std::string name, std::vector<std::vector<Symbol>> alternatives, bool anonymous);
  void append_flattened(std::vector<Symbol>& out, Symbol part) const;

  Grammar grammar_;
  std::vector<bool> defined_;  // [rules] define_rule was called (anonymous rules are defined at birth)
};

}  // namespace llmesh::grammar
