// Hostile templates end in an Error naming what they ran into (RenderLimits,
// integer overflow, self-containing values, runaway widths) instead of hanging,
// exhausting memory, overflowing the stack or overflowing an int64. Each case
// was found by tests/fuzz/fuzz_jinja (or written next to one it found).
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "text/jinja/template.h"

namespace llmesh {
namespace {

using text::jinja::RenderLimits;
using text::jinja::Template;

std::string render(const std::string& source, const RenderLimits& limits = {}) {
  Template t(source);
  t.set_limits(limits);
  return t.render(nlohmann::json::object());
}

std::string error_of(const std::string& source, const RenderLimits& limits = {}) {
  try {
    render(source, limits);
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(JinjaRenderLimits, LoopIterationsAreBounded) {
  RenderLimits limits;
  limits.max_iterations = 1000;
  EXPECT_EQ(render("{% for i in range(10) %}{% for j in range(10) %}.{% endfor %}{% endfor %}", limits),
            std::string(100, '.'));
  EXPECT_NE(error_of("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}", limits)
                .find("RenderLimits::max_iterations"),
            std::string::npos);
  EXPECT_EQ(RenderLimits{}.max_iterations, 1'000'000);  // the server's: ~1 s of a runaway loop, at most
}

TEST(JinjaRenderLimits, MacroCallsAreBounded) {
  // Depth 60 is allowed, but 2^60 calls are not.
  RenderLimits limits;
  limits.max_iterations = 10000;
  EXPECT_NE(error_of("{% macro f(n) %}{% if n %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}{% endmacro %}{{ f(60) }}", limits)
                .find("max_iterations"),
            std::string::npos);
}

TEST(JinjaRenderLimits, OutputAndStringsAreBounded) {
  RenderLimits limits;
  limits.max_output_bytes = 1 << 16;
  EXPECT_NE(error_of("{% for i in range(100000) %}xxxxxxxx{% endfor %}", limits).find("max_output_bytes"),
            std::string::npos);
  EXPECT_NE(error_of("{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
                     limits)
                .find("max_output_bytes"),
            std::string::npos);
  EXPECT_NE(error_of("{{ ('x' * 1000000) | replace('x', 'x' * 1000000) }}").find("replace() result longer"),
            std::string::npos);
}

TEST(JinjaRenderLimits, ListsAreBounded) {
  RenderLimits limits;
  limits.max_list_items = 1000;
  EXPECT_NE(error_of("{{ ([1] * 100000) | length }}", limits).find("max_list_items"), std::string::npos);
}

TEST(JinjaRenderLimits, IntegerOverflowIsAnError) {
  for (const char* source : {"{{ 9223372036854775807 + 1 }}", "{{ -9223372036854775807 - 2 }}",
                             "{{ 9223372036854775807 * 3 }}", "{{ 2 ** 64 }}", "{{ -(-9223372036854775807 - 1) }}",
                             "{{ (-9223372036854775807 - 1) // -1 }}"}) {
    SCOPED_TRACE(source);
    EXPECT_NE(error_of(source).find("integer overflow"), std::string::npos);
  }
  EXPECT_EQ(render("{{ 2 ** 62 }} {{ 3 ** 0 }} {{ 1 ** 4000000000000 }} {{ (-9223372036854775807 - 1) % -1 }}"),
            "4611686018427387904 1 1 0");
  EXPECT_EQ(render("{{ range(9223372036854775800, 9223372036854775807, 4) | list }}"),
            "[9223372036854775800, 9223372036854775804]");
  EXPECT_EQ(render("{{ 1e300 | int }} {{ '1e23' | int(7) }} {{ 2.9 | int }}"), "0 7 2");
}

TEST(JinjaRenderLimits, ValuesCannotContainThemselves) {
  EXPECT_NE(error_of("{% set x = [] %}{{ x.append(x) }}{{ x }}").find("cannot contain itself"), std::string::npos);
  EXPECT_NE(error_of("{% set x = [] %}{% set y = [x] %}{{ x.append(y) }}{{ x }}").find("cannot contain itself"),
            std::string::npos);
  EXPECT_NE(error_of("{% set ns = namespace(a=1) %}{% set ns.a = ns %}{{ ns.a }}").find("cannot contain itself"),
            std::string::npos);
  EXPECT_EQ(render("{% set x = [] %}{% set y = [1] %}{{ x.append(y) }}{{ x.append(y) }}{{ x }}"), "NoneNone[[1], [1]]");
}

TEST(JinjaRenderLimits, ValueNestingIsBounded) {
  EXPECT_NE(error_of("{% set ns = namespace(x=1) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% endfor %}")
                .find("nested more than"),
            std::string::npos);
}

TEST(JinjaRenderLimits, WidthsAreBounded) {
  EXPECT_NE(error_of("{{ 'a\nb' | indent(1000000000000) }}").find("too large"), std::string::npos);
  EXPECT_NE(error_of("{{ [1, [2]] | tojson(indent=2000000000) }}").find("too large"), std::string::npos);
  EXPECT_EQ(render("{{ 'a\nb' | indent(2) }}|{{ 'a\nb' | indent(-3) }}"), "a\n  b|a\nb");
}

// The fuzzer found it: a padded last batch as long as the template asks (1.3 GB).
TEST(JinjaRenderLimits, BatchPaddingIsBounded) {
  EXPECT_NE(error_of("{{ [1, 2, 3] | batch(100000000, 0) }}").find("too large"), std::string::npos);
  EXPECT_EQ(render("{{ [1, 2, 3] | batch(2, 0) | list }}|{{ [1, 2, 3] | batch(100000000) | list }}"),
            "[[1, 2], [3, 0]]|[[1, 2, 3]]");
}

}  // namespace
}  // namespace llmesh
