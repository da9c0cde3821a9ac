// The Jinja language itself: small templates checked against Python jinja2
// (tests/golden/templates/language.jsonl), plus llmesh-specific behaviour
// (error messages with line numbers, unsupported constructs).
#include <gtest/gtest.h>

#include <ctime>

#include "core/error.h"
#include "golden_test_util.h"
#include "text/jinja/template.h"

namespace llmesh {
namespace {

using jinja_test::first_difference;
using jinja_test::golden_path;
using jinja_test::read_jsonl;
using text::jinja::Template;

std::string render(const std::string& source, const nlohmann::json& context = nlohmann::json::object()) {
  return Template(source).render(context);
}

// The Error message for a template that must fail to parse or render.
std::string error_of(const std::string& source, const nlohmann::json& context = nlohmann::json::object()) {
  try {
    Template(source).render(context);
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(JinjaLanguageTest, SnippetsMatchPythonJinja) {
  std::vector<nlohmann::ordered_json> cases = read_jsonl(golden_path("language.jsonl"));
  ASSERT_GE(cases.size(), 50u);
  for (const auto& test_case : cases) {
    const std::string source = test_case["template"].get<std::string>();
    SCOPED_TRACE(source);
    if (test_case.value("error", false)) {
      EXPECT_THROW(Template(source).render(test_case["context"]), Error) << "reference raised: " << test_case["message"];
      continue;
    }
    const std::string expected = test_case["expected"].get<std::string>();
    try {
      std::string actual = Template(source).render(test_case["context"]);
      EXPECT_EQ(actual, expected) << first_difference(expected, actual);
    } catch (const Error& error) {
      ADD_FAILURE() << "unexpected error: " << error.what();
    }
  }
}

TEST(JinjaLanguageTest, SyntaxErrorsNameTheLine) {
  EXPECT_EQ(error_of("line one\n{% if x %}\nunclosed"), "chat_template line 3: unexpected end of template, expected 'elif'");
  EXPECT_EQ(error_of("ok\n\n{{ 1 + }}"), "chat_template line 3: unexpected '}}'");
  EXPECT_EQ(error_of("{% for x in y %}\n{% endif %}"), "chat_template line 2: unexpected 'endif' tag");
  EXPECT_EQ(error_of("a\n{{ 'unterminated }}"), "chat_template line 2: unexpected end of string literal");
  EXPECT_EQ(error_of("{# never closed"), "chat_template line 1: missing end of comment tag '#}'");
}

TEST(JinjaLanguageTest, UnsupportedConstructsAreNamed) {
  EXPECT_EQ(error_of("x\n{% include 'other.j2' %}"), "chat_template line 2: unsupported tag 'include'");
  EXPECT_EQ(error_of("{% extends 'base' %}"), "chat_template line 1: unsupported tag 'extends'");
  EXPECT_EQ(error_of("{{ x | no_such_filter }}"), "chat_template line 1: unsupported filter 'no_such_filter'");
  EXPECT_EQ(error_of("\n{{ x is no_such_test }}"), "chat_template line 2: unsupported test 'no_such_test'");
  EXPECT_NE(error_of("{% for x in y recursive %}{% endfor %}").find("recursive"), std::string::npos);
}

TEST(JinjaLanguageTest, RuntimeErrorsNameTheLine) {
  EXPECT_EQ(error_of("a\nb\n{{ raise_exception('bad input') }}"), "chat_template line 3: bad input");
  EXPECT_EQ(error_of("\n{{ missing.attribute }}"), "chat_template line 2: 'missing' is undefined");
  EXPECT_EQ(error_of("{% set x = 1 %}\n\n{{ 'a' + x }}"), "chat_template line 3: can only concatenate str (not \"int\") to str");
  EXPECT_EQ(error_of("{{ 1 // 0 }}"), "chat_template line 1: integer division or modulo by zero");
  // The name given to the template is the prefix.
  try {
    Template("{{ x.y }}", "my_template").render(nlohmann::json::object());
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()), "my_template line 1: 'x' is undefined");
  }
}

TEST(JinjaLanguageTest, ListAppendMutatesSharedList) {
  // HF's immutable sandbox rejects append; llmesh allows it (a superset) for templates written for plain jinja2.
  EXPECT_EQ(render("{% set ns = namespace(items=[]) %}{% for i in [1, 2] %}{{ ns.items.append(i * 10) or '' }}{% endfor %}{{ ns.items }}"),
            "[10, 20]");
}

TEST(JinjaLanguageTest, StrftimeNowFormatsTheCurrentTime) {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char expected[64];
  std::strftime(expected, sizeof(expected), "%Y-%m", &local);
  EXPECT_EQ(render("{{ strftime_now('%Y-%m') }}"), expected);
}

TEST(JinjaLanguageTest, OrderedContextKeepsKeyOrderInTojson) {
  auto context = nlohmann::ordered_json::parse(R"({"tool": {"zeta": 1, "alpha": {"y": 2, "b": 3}}})");
  EXPECT_EQ(Template("{{ tool | tojson }}").render(context), R"({"zeta": 1, "alpha": {"y": 2, "b": 3}})");
  // A plain nlohmann::json has sorted keys, so the same context prints sorted.
  EXPECT_EQ(Template("{{ tool | tojson }}").render(nlohmann::json(context)), R"({"alpha": {"b": 3, "y": 2}, "zeta": 1})");
}

TEST(JinjaLanguageTest, TemplateIsReusableAndMacrosRecurse) {
  Template countdown("{% macro down(n) %}{{ n }}{% if n > 0 %},{{ down(n - 1) }}{% endif %}{% endmacro %}{{ down(start) }}");
  EXPECT_EQ(countdown.render(nlohmann::json{{"start", 3}}), "3,2,1,0");
  EXPECT_EQ(countdown.render(nlohmann::json{{"start", 1}}), "1,0");
  EXPECT_NE(error_of("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").find("recursion"), std::string::npos);
}

TEST(JinjaLanguageTest, HostileTemplatesFailCleanly) {
  // Deep nesting and runaway sizes are Errors, not stack overflows or huge allocations.
  EXPECT_NE(error_of("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}").find("nested too deeply"),
            std::string::npos);
  std::string long_chain = "{{ 1";
  for (int i = 0; i < 20000; ++i) long_chain += " + 1";
  EXPECT_NE(error_of(long_chain + " }}").find("expression too long"), std::string::npos);
  std::string deep_blocks;
  for (int i = 0; i < 1000; ++i) deep_blocks += "{% if true %}";
  EXPECT_NE(error_of(deep_blocks).find("nested too deeply"), std::string::npos);
  EXPECT_NE(error_of("{{ 'x' * 1000000000000 }}").find("too large"), std::string::npos);
  EXPECT_NE(error_of("{{ '\\xZZ' }}").find("invalid"), std::string::npos);
  EXPECT_EQ(render("{{ 1e999 }} {{ -1e999 }}"), "inf -inf");  // Python's float overflow
}

TEST(JinjaLanguageTest, GenerationTagRendersItsBody) {
  EXPECT_EQ(render("a{% generation %}b{{ 1 }}{% endgeneration %}c"), "ab1c");
}

}  // namespace
}  // namespace llmesh
