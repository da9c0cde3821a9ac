// The grammar combinators and the byte-level matcher, without a vocabulary:
// which byte strings are sentences, prefixes, or rejected.
#include "grammar/grammar_matcher.h"

#include <gtest/gtest.h>

#include <memory>

#include "grammar/grammar.h"
#include "grammar/json_schema_grammar.h"

namespace llmesh::grammar {
namespace {

enum class Verdict { Rejected, Prefix, Complete };

class Matcher {
 public:
  explicit Matcher(const Grammar& g) : m_(std::make_shared<CompiledGrammar>(g)) {}
  Verdict check(std::string_view text) {
    const int32_t s = m_.step(m_.initial_state(), text);
    if (s == GrammarMatcher::kDead) return Verdict::Rejected;
    return m_.is_accepting(s) ? Verdict::Complete : Verdict::Prefix;
  }
  int64_t min_remaining(std::string_view text) { return m_.min_remaining_bytes(m_.step(m_.initial_state(), text)); }

 private:
  GrammarMatcher m_;
};

TEST(GrammarMatcher, LiteralAndChoice) {
  GrammarBuilder b;
  Grammar g = b.build(b.choice({b.literal("true"), b.literal("false"), b.literal("tru")}));
  Matcher m(g);
  EXPECT_EQ(m.check(""), Verdict::Prefix);
  EXPECT_EQ(m.check("tr"), Verdict::Prefix);
  EXPECT_EQ(m.check("tru"), Verdict::Complete);  // "tru" itself and a prefix of "true"
  EXPECT_EQ(m.check("true"), Verdict::Complete);
  EXPECT_EQ(m.check("truex"), Verdict::Rejected);
  EXPECT_EQ(m.check("x"), Verdict::Rejected);
  EXPECT_EQ(m.min_remaining("f"), 4);
}

TEST(GrammarMatcher, BoundedAndUnboundedRepetition) {
  GrammarBuilder b;
  const Symbol digit = b.bytes(ByteSet::range('0', '9'));
  Grammar g = b.build(
      b.sequence({b.literal("<"), b.repeat(digit, 2, 4), b.literal(">"), b.repeat(b.literal("ab"), 0, kUnbounded)}));
  Matcher m(g);
  EXPECT_EQ(m.check("<1>"), Verdict::Rejected);
  EXPECT_EQ(m.check("<1"), Verdict::Prefix);
  EXPECT_EQ(m.check("<12>"), Verdict::Complete);
  EXPECT_EQ(m.check("<1234>"), Verdict::Complete);
  EXPECT_EQ(m.check("<12345"), Verdict::Rejected);
  EXPECT_EQ(m.check("<12>ababab"), Verdict::Complete);
  EXPECT_EQ(m.check("<12>aba"), Verdict::Prefix);
  EXPECT_EQ(m.check("<12>abb"), Verdict::Rejected);
  EXPECT_EQ(m.min_remaining("<1"), 2);
}

TEST(GrammarMatcher, LongRepetitionDoesNotGrowStates) {
  GrammarBuilder b;
  Grammar g = b.build(b.repeat(b.bytes(ByteSet::range('a', 'z')), 0, kUnbounded));
  GrammarMatcher m(std::make_shared<CompiledGrammar>(g));
  int32_t s = m.initial_state();
  for (int i = 0; i < 100000; ++i) s = m.step(s, uint8_t('a' + i % 26));
  EXPECT_TRUE(m.is_accepting(s));
  EXPECT_LT(m.num_states(), 5u);  // the right recursion is a loop, not a growing stack
}

TEST(GrammarMatcher, TextUntilTerminator) {
  GrammarBuilder b;
  Grammar g = b.build(b.sequence({b.text_until("</think>"), b.literal("{}")}));
  Matcher m(g);
  EXPECT_EQ(m.check("hello </thin"), Verdict::Prefix);
  EXPECT_EQ(m.check("a < b </ </th </think>"), Verdict::Prefix);
  EXPECT_EQ(m.check("a </think>{}"), Verdict::Complete);
  EXPECT_EQ(m.check("</think></think>"), Verdict::Rejected);  // the terminator ends the free text
  EXPECT_EQ(m.check("<</think>{}"), Verdict::Complete);
  EXPECT_EQ(m.min_remaining("x </th"), 4 + 2);  // "ink>" then "{}"
}

TEST(GrammarMatcher, TextUntilWithForbiddenStrings) {
  // An XML value: text, then "\n</p>"; neither "</p>" nor "</call>" inside the text.
  GrammarBuilder b;
  Grammar g = b.build(b.sequence({b.text_until("\n</p>", {"</p>", "</call>"}), b.literal("!")}));
  Matcher m(g);
  EXPECT_EQ(m.check("a\nb <p> </ca </cal\n</p>!"), Verdict::Complete);
  EXPECT_EQ(m.check("\n</p>!"), Verdict::Complete);           // empty text
  EXPECT_EQ(m.check("x\n\n</p>!"), Verdict::Complete);        // the text may end with a newline
  EXPECT_EQ(m.check("x</p>"), Verdict::Rejected);              // the closing tag without its newline
  EXPECT_EQ(m.check("x</call>"), Verdict::Rejected);
  EXPECT_EQ(m.check("x</cal"), Verdict::Prefix);
  EXPECT_EQ(m.check("x\n</p>\n</p>!"), Verdict::Rejected);    // the terminator ends the text
  EXPECT_EQ(m.min_remaining("x\n</"), 2 + 1);                  // "p>" then "!"
  // A forbidden string equal to the terminator changes nothing.
  GrammarBuilder b2;
  Matcher m2(b2.build(b2.text_until("</v>", {"</v>", "</t>"})));
  EXPECT_EQ(m2.check("a</v>"), Verdict::Complete);
  EXPECT_EQ(m2.check("a</t>"), Verdict::Rejected);
}

TEST(GrammarMatcher, RecursiveRules) {
  GrammarBuilder b;
  // nest ::= "(" nest ")" | "x"
  const int32_t nest = b.declare_rule("nest");
  b.define_rule(nest, b.choice({b.sequence({b.literal("("), b.rule(nest), b.literal(")")}), b.literal("x")}));
  Grammar g = b.build(b.rule(nest));
  Matcher m(g);
  EXPECT_EQ(m.check("((x))"), Verdict::Complete);
  EXPECT_EQ(m.check("((x)"), Verdict::Prefix);
  EXPECT_EQ(m.check("((x)))"), Verdict::Rejected);
  EXPECT_EQ(m.min_remaining("((("), 4);
}

TEST(GrammarMatcher, RejectsNullableRepetitionAndUndefinedRules) {
  GrammarBuilder b;
  EXPECT_THROW(b.repeat(b.optional(b.literal("a")), 0, kUnbounded), std::exception);
  GrammarBuilder b2;
  const int32_t r = b2.declare_rule("never");
  EXPECT_THROW(b2.build(b2.rule(r)), std::exception);
}

}  // namespace
}  // namespace llmesh::grammar

namespace llmesh::grammar {
namespace {

// Properties come in the order the client wrote them: a model produces them
// in that order, so the grammar must not force another (nlohmann::json would sort them).
TEST(GrammarMatcher, SchemaPropertiesKeepTheClientsOrder) {
  const auto schema = nlohmann::ordered_json::parse(
      R"({"type": "object", "properties": {"zeta": {"type": "integer"}, "alpha": {"type": "integer"}},
          "required": ["zeta", "alpha"], "additionalProperties": false})");
  Matcher m(json_schema_grammar(schema, nullptr));
  EXPECT_EQ(m.check(R"({"zeta":1,"alpha":2})"), Verdict::Complete);
  EXPECT_EQ(m.check(R"({"alpha")"), Verdict::Rejected);
}

}  // namespace
}  // namespace llmesh::grammar
