// libFuzzer target: arbitrary text as the JSON schema of response_format
// json_schema / text.format / output_config.format, through what
// api/constrained_output.cpp does with it: JsonSchemaCompiler -> Grammar ->
// CompiledGrammar -> GrammarMatcher, then a walk of the matcher that writes one
// sentence of the grammar (the first live byte at each step, up to a bound),
// checking min_remaining_bytes along the way.
// Unusable schemas must end in llmesh::Error; anything else (a crash, a
// sanitizer report, another exception, a hang) is a bug.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "grammar/grammar_matcher.h"
#include "grammar/json_schema_grammar.h"

namespace g = llmesh::grammar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const nlohmann::ordered_json schema = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (schema.is_discarded()) return 0;
  try {
    std::vector<std::string> ignored;
    g::GrammarBuilder builder;
    g::JsonSchemaCompiler compiler(builder, schema, &ignored);
    const g::Grammar grammar = builder.build(compiler.root_value());
    (void)grammar.to_string();
    g::GrammarMatcher matcher(std::make_shared<const g::CompiledGrammar>(grammar));
    int32_t state = matcher.initial_state();
    // Bytes the walk tries first: enough to finish most JSON values quickly.
    static const std::string preferred = "}]\"0ntf{[,:a1.e-+ \\u";
    for (int step = 0; step < 96 && !matcher.is_accepting(state); ++step) {
      int32_t next = g::GrammarMatcher::kDead;
      for (char c : preferred) {
        next = matcher.step(state, uint8_t(c));
        if (next != g::GrammarMatcher::kDead) break;
      }
      for (int b = 0; b < 256 && next == g::GrammarMatcher::kDead; ++b) next = matcher.step(state, uint8_t(b));
      if (next == g::GrammarMatcher::kDead) break;  // a trapped state (schema with no sentence)
      state = next;
      volatile int64_t sink = matcher.min_remaining_bytes(state);
      (void)sink;
    }
  } catch (const llmesh::Error&) {
  }
  return 0;
}
