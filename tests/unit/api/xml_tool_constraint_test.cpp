// Forced tool calls in the XML formats (Qwen3-Coder, GLM-4.5): random walks
// through the token mask of tool_call_grammar, over the real Qwen3 vocabulary,
// must end in text that the OutputParser reads back as one call whose
// arguments validate against the tool's schema (an independent validator below).
#include <algorithm>
#include <filesystem>
#include <random>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "api/constrained_output.h"
#include "qwen3_tokenizer.h"
#include "grammar/grammar_constraint.h"
#include "text/output_parser.h"
#include "text/tokenizer_json.h"

namespace llmesh::api {

using nlohmann::ordered_json;
using text::ToolCallFormat;

namespace {

// The keywords the tools below use: type (lists too), enum, const, $ref to #/$defs, properties,
// required, additionalProperties false, items, minimum.
bool valid(const ordered_json& v, const ordered_json& schema, const ordered_json& root, std::string* why) {
  auto no = [&](const std::string& reason) {
    *why = reason + ": " + v.dump() + " vs " + schema.dump();
    return false;
  };
  if (schema.contains("$ref"))
    return valid(v, root.at(ordered_json::json_pointer(schema["$ref"].get<std::string>().substr(1))), root, why);
  if (schema.contains("enum") && std::find(schema["enum"].begin(), schema["enum"].end(), v) == schema["enum"].end())
    return no("enum");
  if (schema.contains("const") && v != schema["const"]) return no("const");
  if (schema.contains("type")) {
    const ordered_json types = schema["type"].is_array() ? schema["type"] : ordered_json::array({schema["type"]});
    bool ok = false;
    for (const auto& t : types) {
      ok = ok || (t == "string" && v.is_string()) || (t == "integer" && v.is_number_integer()) ||
           (t == "number" && v.is_number()) || (t == "boolean" && v.is_boolean()) || (t == "null" && v.is_null()) ||
           (t == "object" && v.is_object()) || (t == "array" && v.is_array());
    }
    if (!ok) return no("type");
  }
  if (v.is_number() && schema.contains("minimum") && v.get<double>() < schema["minimum"].get<double>())
    return no("minimum");
  if (v.is_object()) {
    for (const auto& key : schema.value("required", ordered_json::array()))
      if (!v.contains(key.get<std::string>())) return no("required " + key.get<std::string>());
    const ordered_json properties = schema.value("properties", ordered_json::object());
    for (const auto& [key, value] : v.items()) {
      if (properties.contains(key)) {
        if (!valid(value, properties[key], root, why)) return false;
      } else if (schema.contains("additionalProperties") && schema["additionalProperties"] == false) {
        return no("additional property " + key);
      }
    }
  }
  if (v.is_array() && schema.contains("items"))
    for (const auto& item : v)
      if (!valid(item, schema["items"], root, why)) return false;
  return true;
}

const ordered_json& tools() {
  static const ordered_json t = ordered_json::parse(R"([
    {"type": "function", "function": {"name": "write_file", "parameters": {"type": "object",
      "properties": {
        "path": {"type": "string", "minLength": 1},
        "content": {"type": "string"},
        "mode": {"type": "integer", "minimum": 0},
        "overwrite": {"type": "boolean"}},
      "required": ["path", "content"], "additionalProperties": false}}},
    {"type": "function", "function": {"name": "search", "parameters": {"type": "object",
      "properties": {
        "query": {"type": "string"},
        "unit": {"enum": ["c", "f"]},
        "ratio": {"type": "number"},
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
        "where": {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": ["string", "null"]}},
                  "required": ["city"]},
        "cursor": {"type": ["string", "null"]},
        "level": {"$ref": "#/$defs/level"},
        "nothing": {"type": "null"}},
      "$defs": {"level": {"type": "integer", "enum": [1, 2, 3]}},
      "required": ["query", "unit", "level"], "additionalProperties": false}}},
    {"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}}
  ])");
  return t;
}

const ordered_json& schema_of(const std::string& name) {
  for (const auto& tool : tools())
    if (tool["function"]["name"] == name) return tool["function"]["parameters"];
  static const ordered_json none;
  return none;
}

// Samples allowed tokens (uniformly, or the lowest allowed id with probability
// 1/3) until the grammar is complete, within `budget` tokens.
std::string random_walk(const text::Tokenizer& tok, grammar::GrammarConstraint& c, uint64_t seed, int budget) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> ids;
  for (int n = 0; n < budget; ++n) {
    c.set_tokens_left(budget - n);
    if (c.is_complete() && (!c.can_continue() || rng() % 4 == 0)) break;
    const std::vector<uint8_t>& allowed = c.compute_allowed();
    std::vector<int32_t> candidates;
    for (size_t i = 0; i < allowed.size(); ++i)
      if (allowed[i]) candidates.push_back(int32_t(i));
    if (candidates.empty()) {
      ADD_FAILURE() << "no token allowed after '" << tok.decode(ids) << "'";
      break;
    }
    const int32_t id = rng() % 3 == 0 ? candidates.front() : candidates[rng() % candidates.size()];
    c.accept_token(id);
    ids.push_back(id);
  }
  EXPECT_TRUE(c.is_complete()) << tok.decode(ids);
  return tok.decode(ids);
}

void expect_forced_calls_validate(ToolCallFormat format, const std::string& chat_template,
                                  const std::string& forced_name, const ReasoningPrefix& reasoning, int num_walks) {
  const text::Tokenizer* tok = qwen3_tokenizer();
  if (!tok) GTEST_SKIP() << "assets/npm/tokenizer-qwen3 missing (scripts/fetch_assets.sh)";
  std::vector<std::string> ignored;
  auto compiled = std::make_shared<const grammar::CompiledGrammar>(
      tool_call_grammar(format, chat_template, tools(), forced_name, reasoning, &ignored));
  const auto vocab = grammar::VocabIndex::for_tokenizer(*tok);
  text::OutputParserOptions options;
  options.parse_tool_calls = true;
  options.tool_call_format = format;
  options.tool_parameter_types = text::ToolParameterTypes::from_tools(tools());
  std::set<std::string> names;
  for (int i = 0; i < num_walks; ++i) {
    grammar::GrammarConstraint constraint(compiled, vocab);
    const std::string text = random_walk(*tok, constraint, 77 + uint64_t(i), 160);
    SCOPED_TRACE(text);
    text::OutputParser parser(options);
    text::OutputDelta d = parser.push(text);
    d.append(parser.finish());
    EXPECT_EQ(d.content, "");
    ASSERT_EQ(d.tool_calls.size(), 1u);
    const text::ParsedToolCall& call = d.tool_calls[0];
    if (!forced_name.empty()) EXPECT_EQ(call.name, forced_name);
    const ordered_json& schema = schema_of(call.name);
    ASSERT_FALSE(schema.is_null()) << call.name;
    std::string why;
    EXPECT_TRUE(valid(ordered_json::parse(call.arguments_json), schema, schema, &why)) << why;
    names.insert(call.name);
  }
  if (forced_name.empty()) EXPECT_GT(names.size(), 1u) << "the walks should reach several tools";
  // write_file's path has a minLength, which raw text cannot enforce: it is reported.
  if (forced_name.empty() || forced_name == "write_file")
    EXPECT_NE(std::find_if(ignored.begin(), ignored.end(),
                         [](const std::string& s) { return s.find("minLength") != std::string::npos; }),
            ignored.end());
}

TEST(XmlToolConstraint, Qwen3CoderForcedCallsParseAndValidate) {
  expect_forced_calls_validate(ToolCallFormat::Qwen3CoderXml, "", "", ReasoningPrefix{}, 12);
}

TEST(XmlToolConstraint, Qwen3CoderNamedCallAfterReasoning) {
  ReasoningPrefix reasoning;
  reasoning.allow_reasoning = true;
  expect_forced_calls_validate(ToolCallFormat::Qwen3CoderXml, "", "search", reasoning, 6);
}

TEST(XmlToolConstraint, Glm45ForcedCallsParseAndValidate) {
  expect_forced_calls_validate(ToolCallFormat::Glm45Xml, "<arg_key>{{ k }}</arg_key>\n<arg_value>", "",
                               ReasoningPrefix{}, 12);
  // GLM-4.7's compact layout.
  expect_forced_calls_validate(ToolCallFormat::Glm45Xml, "<arg_key>{{ k }}</arg_key><arg_value>", "search",
                               ReasoningPrefix{}, 6);
}

TEST(XmlToolConstraint, RawTextNeverHoldsTheClosingTags) {
  // Walks that prefer "<" and "</" tokens must still close the value where the parser does.
  const text::Tokenizer* tok = qwen3_tokenizer();
  if (!tok) GTEST_SKIP() << "assets/npm/tokenizer-qwen3 missing";
  const ordered_json one_tool = ordered_json::parse(
      R"([{"type": "function", "function": {"name": "echo", "parameters": {"type": "object",
          "properties": {"text": {"type": "string"}}, "required": ["text"]}}}])");
  for (ToolCallFormat format : {ToolCallFormat::Qwen3CoderXml, ToolCallFormat::Glm45Xml}) {
    auto compiled = std::make_shared<const grammar::CompiledGrammar>(
        tool_call_grammar(format, "", one_tool, "", ReasoningPrefix{}, nullptr));
    const auto vocab = grammar::VocabIndex::for_tokenizer(*tok);
    std::vector<int32_t> tag_tokens;
    for (const char* piece : {"</", "<", "</tool_call>", "</parameter>", "</arg_value>", ">", "\n"})
      if (auto id = tok->token_id(piece)) tag_tokens.push_back(*id);
    for (int walk = 0; walk < 6; ++walk) {
      grammar::GrammarConstraint c(compiled, vocab);
      std::mt19937_64 rng(walk);
      std::vector<int32_t> ids;
      for (int n = 0; n < 80 && !(c.is_complete() && !c.can_continue()); ++n) {
        c.set_tokens_left(80 - n);
        const std::vector<uint8_t>& allowed = c.compute_allowed();
        std::vector<int32_t> preferred, all;
        for (size_t i = 0; i < allowed.size(); ++i) {
          if (!allowed[i]) continue;
          all.push_back(int32_t(i));
          if (std::find(tag_tokens.begin(), tag_tokens.end(), int32_t(i)) != tag_tokens.end())
            preferred.push_back(int32_t(i));
        }
        ASSERT_FALSE(all.empty());
        const int32_t id = !preferred.empty() && rng() % 2 ? preferred[rng() % preferred.size()] : all[rng() % all.size()];
        c.accept_token(id);
        ids.push_back(id);
      }
      const std::string text = tok->decode(ids);
      SCOPED_TRACE(text);
      text::OutputParserOptions options;
      options.parse_tool_calls = true;
      options.tool_call_format = format;
      options.tool_parameter_types = text::ToolParameterTypes::from_tools(one_tool);
      text::OutputParser parser(options);
      text::OutputDelta d = parser.push(text);
      d.append(parser.finish());
      ASSERT_EQ(d.tool_calls.size(), 1u);
      EXPECT_TRUE(ordered_json::parse(d.tool_calls[0].arguments_json)["text"].is_string());
    }
  }
}

// Mistral's forced calls: the older templates' [TOOL_CALLS][{…}] and v11's [TOOL_CALLS]NAME[ARGS]{…},
// each parsed back into one call whose arguments satisfy the tool's schema.
TEST(ForcedToolCalls, MistralBothForms) {
  const text::Tokenizer* tok = qwen3_tokenizer();
  if (!tok) GTEST_SKIP() << "assets/npm/tokenizer-qwen3 missing (scripts/fetch_assets.sh)";
  const auto vocab = grammar::VocabIndex::for_tokenizer(*tok);
  for (const std::string chat_template : {std::string(R"({{ "[TOOL_CALLS][" }})"),
                                          std::string(R"({{ "[TOOL_CALLS]" + name + "[ARGS]" }})")}) {
    SCOPED_TRACE(chat_template);
    auto compiled = std::make_shared<const grammar::CompiledGrammar>(
        tool_call_grammar(ToolCallFormat::Mistral, chat_template, tools(), "", ReasoningPrefix{}, nullptr));
    std::set<std::string> names;
    for (int i = 0; i < 6; ++i) {
      grammar::GrammarConstraint constraint(compiled, vocab);
      const std::string out = random_walk(*tok, constraint, 500 + uint64_t(i), 160);
      SCOPED_TRACE(out);
      EXPECT_EQ(out.rfind("[TOOL_CALLS]", 0), 0u);
      EXPECT_EQ(out.find("[ARGS]") != std::string::npos, chat_template.find("[ARGS]") != std::string::npos);
      text::OutputParserOptions options;
      options.parse_tool_calls = true;
      options.tool_call_format = ToolCallFormat::Mistral;
      text::OutputParser parser(options);
      text::OutputDelta d = parser.push(out);
      d.append(parser.finish());
      EXPECT_EQ(d.content, "");
      ASSERT_EQ(d.tool_calls.size(), 1u);
      EXPECT_TRUE(text::is_mistral_call_id(d.tool_calls[0].id));
      const ordered_json& schema = schema_of(d.tool_calls[0].name);
      ASSERT_FALSE(schema.is_null()) << d.tool_calls[0].name;
      std::string why;
      EXPECT_TRUE(valid(ordered_json::parse(d.tool_calls[0].arguments_json), schema, schema, &why)) << why;
      names.insert(d.tool_calls[0].name);
    }
    EXPECT_GT(names.size(), 1u) << "the walks should reach several tools";
  }
}

// Harmony's forced calls over the real o200k_harmony vocabulary, whose header tokens are special
// (no grammar writes them): with one function to call, the prompt opens the call's message and the
// grammar writes the arguments; with several, the grammar writes the header as text. Either way
// the OutputParser reads back one call whose arguments satisfy the tool's schema.
TEST(ForcedToolCalls, Harmony) {
  const std::string path = std::string(LLMESH_SOURCE_DIR) + "/assets/npm/tokenizer-gptoss/models/tokenizer.json";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "assets/npm/tokenizer-gptoss missing (scripts/fetch_assets.sh)";
  static const text::Tokenizer tok(text::read_hf_tokenizer_json(path));
  const auto vocab = grammar::VocabIndex::for_tokenizer(tok);
  const std::string base_prompt = "<|start|>user<|message|>go<|end|><|start|>assistant";
  EXPECT_EQ(harmony_prompt_lead(ConstraintSpec::json_schema(ordered_json::object(), "x")),
            "<|channel|>final<|message|>");
  for (const std::string forced : {std::string(), std::string("search")}) {
    SCOPED_TRACE("forced: " + forced);
    const std::string lead = harmony_prompt_lead(ConstraintSpec::tool_call(tools(), forced));
    EXPECT_EQ(lead, forced.empty() ? "" : "<|channel|>commentary to=functions.search <|constrain|>json<|message|>");
    auto compiled = std::make_shared<const grammar::CompiledGrammar>(
        tool_call_grammar(ToolCallFormat::Harmony, "", tools(), forced, ReasoningPrefix{}, nullptr));
    std::set<std::string> names;
    for (int i = 0; i < 6; ++i) {
      grammar::GrammarConstraint constraint(compiled, vocab);
      const std::string out = random_walk(tok, constraint, 700 + uint64_t(i), 200);
      SCOPED_TRACE(out);
      EXPECT_EQ(out.rfind("<|channel|>commentary to=functions.", 0) == 0, forced.empty());
      text::OutputParserOptions options;
      options.parse_tool_calls = true;
      options.tool_call_format = ToolCallFormat::Harmony;
      options.harmony_open_header = text::harmony_open_header(base_prompt + lead).value_or("");
      text::OutputParser parser(options);
      text::OutputDelta d = parser.push(out);
      d.append(parser.finish());
      EXPECT_EQ(d.content, "");
      EXPECT_EQ(d.reasoning, "");
      ASSERT_EQ(d.tool_calls.size(), 1u);
      if (!forced.empty()) EXPECT_EQ(d.tool_calls[0].name, forced);
      const ordered_json& schema = schema_of(d.tool_calls[0].name);
      ASSERT_FALSE(schema.is_null()) << d.tool_calls[0].name;
      std::string why;
      EXPECT_TRUE(valid(ordered_json::parse(d.tool_calls[0].arguments_json), schema, schema, &why)) << why;
      names.insert(d.tool_calls[0].name);
    }
    if (forced.empty()) EXPECT_GT(names.size(), 1u) << "the walks should reach several tools";
  }
}

}  // namespace
}  // namespace llmesh::api
