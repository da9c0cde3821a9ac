// JSON-schema constraints over the real Qwen3 vocabulary: random walks through
// the token mask must end in text that nlohmann::json parses and that an
// independent validator (below) accepts; hand-picked invalid tokens are masked.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <random>

#include <nlohmann/json.hpp>

#include "grammar/grammar_constraint.h"
#include "grammar/json_schema_grammar.h"
#include "text/tokenizer.h"
#include "text/tokenizer_json.h"

namespace llmesh::grammar {

using text::read_hf_tokenizer_json;
using text::Tokenizer;

namespace {

using nlohmann::json;

const Tokenizer* qwen3_tokenizer() {
  static std::unique_ptr<Tokenizer> tokenizer = [] {
    const std::string path = std::string(LLMESH_SOURCE_DIR) + "/assets/npm/tokenizer-qwen3/models/tokenizer.json";
    if (!std::filesystem::exists(path)) return std::unique_ptr<Tokenizer>();
    return std::make_unique<Tokenizer>(read_hf_tokenizer_json(path));
  }();
  return tokenizer.get();
}

#define REQUIRE_TOKENIZER()                 \
  const Tokenizer* tok = qwen3_tokenizer(); \
  if (!tok) GTEST_SKIP() << "assets/npm/tokenizer-qwen3 missing (scripts/fetch_assets.sh)"

// ---- an independent validator for the keywords the compiler enforces ------------

size_t utf8_length(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80;
  return n;
}

bool validate(const json& v, const json& schema, const json& root, std::string* why);

bool type_matches(const json& v, const std::string& type) {
  if (type == "string") return v.is_string();
  if (type == "number") return v.is_number();
  if (type == "integer")
    return v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  return false;
}

bool validate(const json& v, const json& schema, const json& root, std::string* why) {
  auto no = [&](const std::string& reason) {
    *why = reason + ": " + v.dump() + " vs " + schema.dump();
    return false;
  };
  if (schema.is_boolean()) return schema.get<bool>() || no("false schema");
  if (schema.contains("$ref")) {
    const std::string ref = schema["$ref"];
    return validate(v, ref == "#" ? root : root.at(json::json_pointer(ref.substr(1))), root, why);
  }
  if (schema.contains("allOf"))
    for (const auto& s : schema["allOf"])
      if (!validate(v, s, root, why)) return false;
  for (const char* key : {"anyOf", "oneOf"}) {
    if (!schema.contains(key)) continue;
    bool any = false;
    for (const auto& s : schema[key]) any = any || validate(v, s, root, why);
    if (!any) return no(std::string("no ") + key + " option");
  }
  if (schema.contains("const") && v != schema["const"]) return no("const");
  if (schema.contains("enum")) {
    bool found = false;
    for (const auto& e : schema["enum"]) found = found || e == v;
    if (!found) return no("enum");
  }
  if (schema.contains("type")) {
    std::vector<std::string> types;
    if (schema["type"].is_string())
      types.push_back(schema["type"]);
    else
      for (const auto& t : schema["type"]) types.push_back(t);
    if (schema.value("nullable", false)) types.push_back("null");
    bool ok = false;
    for (const auto& t : types) ok = ok || type_matches(v, t);
    if (!ok) return no("type");
  }
  if (v.is_string()) {
    const size_t n = utf8_length(v.get<std::string>());
    if (schema.contains("minLength") && n < schema["minLength"].get<size_t>()) return no("minLength");
    if (schema.contains("maxLength") && n > schema["maxLength"].get<size_t>()) return no("maxLength");
  }
  if (v.is_number() && schema.contains("minimum") && schema["minimum"].get<double>() <= 1 &&
      v.get<double>() < schema["minimum"].get<double>())
    return no("minimum");
  if (v.is_object()) {
    const json props = schema.value("properties", json::object());
    for (const auto& r : schema.value("required", json::array()))
      if (!v.contains(r.get<std::string>())) return no("required " + r.get<std::string>());
    for (const auto& [key, value] : v.items()) {
      if (props.contains(key)) {
        if (!validate(value, props[key], root, why)) return false;
      } else if (schema.contains("additionalProperties")) {
        if (!validate(value, schema["additionalProperties"], root, why)) return false;
      }
    }
  }
  if (v.is_array()) {
    if (schema.contains("minItems") && v.size() < schema["minItems"].get<size_t>()) return no("minItems");
    if (schema.contains("maxItems") && v.size() > schema["maxItems"].get<size_t>()) return no("maxItems");
    if (schema.contains("items"))
      for (const auto& item : v)
        if (!validate(item, schema["items"], root, why)) return false;
  }
  return true;
}

// ---- random walks through the mask --------------------------------------------

std::shared_ptr<GrammarConstraint> make_constraint(const Tokenizer& tok, const json& schema,
                                                   std::vector<std::string>* ignored = nullptr) {
  Grammar g = json_schema_grammar(schema, ignored);
  return std::make_shared<GrammarConstraint>(std::make_shared<CompiledGrammar>(g), VocabIndex::for_tokenizer(tok));
}

struct Walk {
  std::string text;
  int num_tokens = 0;
  bool complete = false;
};

// Samples tokens the mask allows (uniformly, or the lowest allowed id — short
// punctuation in Qwen's vocabulary — with probability 1/3 so values also end
// by themselves) until complete, within `budget_tokens`.
Walk random_walk(const Tokenizer& tok, GrammarConstraint& c, uint64_t seed, int budget_tokens) {
  std::mt19937_64 rng(seed);
  Walk w;
  std::vector<int32_t> ids;
  while (w.num_tokens < budget_tokens) {
    c.set_tokens_left(budget_tokens - w.num_tokens);
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
    ++w.num_tokens;
  }
  w.complete = c.is_complete();
  w.text = tok.decode(ids);
  return w;
}

void expect_walks_validate(const json& schema, int num_walks = 4, int budget_tokens = 60) {
  REQUIRE_TOKENIZER();
  for (int i = 0; i < num_walks; ++i) {
    auto c = make_constraint(*tok, schema);
    const Walk w = random_walk(*tok, *c, 1000 + uint64_t(i), budget_tokens);
    ASSERT_TRUE(w.complete) << "incomplete after " << w.num_tokens << " tokens: " << w.text;
    json parsed;
    try {
      parsed = json::parse(w.text);
    } catch (const std::exception& e) {
      FAIL() << "does not parse: " << w.text << " (" << e.what() << ")";
    }
    std::string why;
    EXPECT_TRUE(validate(parsed, schema, schema, &why)) << why << "\n text: " << w.text;
  }
}

TEST(JsonSchemaConstraint, ObjectWithRequiredAndOptionalProperties) {
  expect_walks_validate(json::parse(R"({"type":"object","properties":{
      "name":{"type":"string"},"age":{"type":"integer","minimum":0},
      "tags":{"type":"array","items":{"type":"string"},"maxItems":3}},"required":["name","age"]})"));
}

TEST(JsonSchemaConstraint, OnlyOptionalProperties) {
  expect_walks_validate(json::parse(R"({"type":"object","properties":{
      "a":{"type":"boolean"},"b":{"type":"null"},"c":{"type":"number"}},"additionalProperties":false})"));
}

TEST(JsonSchemaConstraint, EnumConstAndUnicode) {
  expect_walks_validate(json::parse(R"({"enum":["red","green","日本語",3,null,{"k":[1,2]}]})"));
  expect_walks_validate(json::parse(R"({"type":"object","properties":{"v":{"const":"ü\"q"}},"required":["v"]})"));
}

TEST(JsonSchemaConstraint, AnyOfAndTypeLists) {
  expect_walks_validate(json::parse(R"({"anyOf":[{"type":"number"},{"type":"null"},{"type":"boolean"}]})"));
  expect_walks_validate(json::parse(R"({"type":"array","minItems":1,"maxItems":4,"items":{"type":"object",
      "properties":{"x":{"const":42},"y":{"type":["string","null"]}},"required":["x","y"]}})"));
}

TEST(JsonSchemaConstraint, AnyJsonValue) {
  expect_walks_validate(json::object(), 6, 80);
  expect_walks_validate(json::parse(R"({"type":"object"})"), 4, 80);
}

TEST(JsonSchemaConstraint, RecursiveRef) {
  expect_walks_validate(json::parse(R"({"$defs":{"node":{"type":"object","properties":{
      "value":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#/$defs/node"},"maxItems":2}},
      "required":["value"]}},"$ref":"#/$defs/node"})"),
                        4, 100);
}

TEST(JsonSchemaConstraint, StringLengthAndMaps) {
  expect_walks_validate(json::parse(R"({"type":"string","minLength":2,"maxLength":5})"));
  expect_walks_validate(json::parse(R"({"type":"object","additionalProperties":{"type":"boolean"}})"));
}

TEST(JsonSchemaConstraint, EmptyPropertiesMeansEmptyObject) {
  REQUIRE_TOKENIZER();
  auto c = make_constraint(*tok, json::parse(R"({"type":"object","properties":{}})"));
  EXPECT_FALSE(c->accept_bytes("{\"a\""));
  EXPECT_TRUE(c->accept_bytes("{}"));
  EXPECT_TRUE(c->is_complete());
}

TEST(JsonSchemaConstraint, AllOfMerges) {
  expect_walks_validate(
      json::parse(R"({"allOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},
      {"properties":{"b":{"type":"string","maxLength":3}},"required":["b"]}]})"));
}

TEST(JsonSchemaConstraint, ReportsIgnoredKeywords) {
  REQUIRE_TOKENIZER();
  std::vector<std::string> ignored;
  const json schema =
      json::parse(R"({"type":"object","properties":{"a":{"type":"string","pattern":"^x","format":"email"},
      "n":{"type":"number","maximum":3}},"required":["a"],"x-vendor":1,"title":"T","description":"d"})");
  auto c = make_constraint(*tok, schema, &ignored);
  auto has = [&](const std::string& s) { return std::find(ignored.begin(), ignored.end(), s) != ignored.end(); };
  EXPECT_TRUE(has("pattern at #/properties/a"));
  EXPECT_TRUE(has("format at #/properties/a"));
  EXPECT_TRUE(has("maximum at #/properties/n"));
  EXPECT_TRUE(has("x-vendor at #"));
  EXPECT_EQ(ignored.size(), 4u) << testing::PrintToString(ignored);  // title/description are annotations
}

TEST(JsonSchemaConstraint, RejectsUnusableSchemas) {
  std::vector<std::string> ignored;
  EXPECT_THROW(json_schema_grammar(json(false), &ignored), std::exception);
  EXPECT_THROW(json_schema_grammar(json::parse(R"({"$ref":"#/$defs/missing"})"), &ignored), std::exception);
  EXPECT_THROW(json_schema_grammar(json::parse(R"({"type":"strange"})"), &ignored), std::exception);
}

// Found by fuzz_json_schema: a definition whose allOf refers to itself folded
// for ever (a stack overflow). Now an error naming the limit.
TEST(JsonSchemaConstraint, SelfReferencingAllOfIsAnErrorNotACrash) {
  std::vector<std::string> ignored;
  const json schema = json::parse(R"({"$defs": {"node": {"type": "object", "allOf": [{"$ref": "#/$defs/node"}]}},
                                      "allOf": [{"$ref": "#/$defs/node"}]})");
  try {
    json_schema_grammar(schema, &ignored);
    FAIL() << "a self-referencing allOf compiled";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("allOf nested more than"), std::string::npos) << e.what();
  }
  // allOf through a chain of distinct definitions still folds.
  const json chain = json::parse(R"({"$defs": {"a": {"properties": {"x": {"type": "integer"}}},
                                               "b": {"allOf": [{"$ref": "#/$defs/a"}], "required": ["x"]}},
                                     "allOf": [{"$ref": "#/$defs/b"}], "type": "object"})");
  EXPECT_NO_THROW(json_schema_grammar(chain, &ignored));
}

// The single token for `text` in the Qwen3 vocabulary.
int32_t single_token(const Tokenizer& tok, const std::string& text) {
  const std::vector<int32_t> ids = tok.encode(text, /*parse_special=*/false);
  EXPECT_EQ(ids.size(), 1u) << "'" << text << "' is not one token";
  return ids.empty() ? -1 : ids[0];
}

TEST(JsonSchemaConstraint, MasksInvalidContinuations) {
  REQUIRE_TOKENIZER();
  auto c = make_constraint(
      *tok, json::parse(R"({"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]})"));
  auto allowed = [&](const std::string& text) { return c->compute_allowed()[size_t(single_token(*tok, text))] != 0; };
  EXPECT_TRUE(allowed("{\""));
  EXPECT_TRUE(allowed("{"));
  EXPECT_FALSE(allowed("["));
  EXPECT_FALSE(allowed("\""));
  EXPECT_FALSE(allowed(" {"));
  ASSERT_TRUE(c->accept_bytes("{\"count\":"));
  EXPECT_TRUE(allowed(" "));
  EXPECT_TRUE(allowed("1"));
  EXPECT_TRUE(allowed("-"));
  EXPECT_FALSE(allowed("\""));
  EXPECT_FALSE(allowed("true"));
  EXPECT_FALSE(allowed("}"));  // the value is required
  ASSERT_TRUE(c->accept_bytes(" 12"));
  EXPECT_TRUE(allowed("3"));
  EXPECT_TRUE(allowed("}"));
  EXPECT_FALSE(allowed(","));  // no other property exists
  EXPECT_FALSE(allowed("."));  // an integer
  EXPECT_FALSE(c->is_complete());
  ASSERT_TRUE(c->accept_bytes("}"));
  EXPECT_TRUE(c->is_complete());
  EXPECT_FALSE(c->can_continue());
  // Special tokens are never allowed by the grammar (the engine handles EOS).
  const auto special = tok->token_id("<|im_end|>");
  ASSERT_TRUE(special.has_value());
  EXPECT_EQ(c->compute_allowed()[size_t(*special)], 0);
}

TEST(JsonSchemaConstraint, StringsStayValidUtf8) {
  REQUIRE_TOKENIZER();
  auto c = make_constraint(*tok, json::parse(R"({"type":"string"})"));
  ASSERT_TRUE(c->accept_bytes("\"a"));
  const std::vector<uint8_t>& allowed = c->compute_allowed();
  int num_checked = 0;
  for (int32_t id = 0; id < tok->vocab_size(); ++id) {
    const std::string bytes = tok->token_bytes(id);
    if (bytes.size() != 1) continue;
    const auto b = uint8_t(bytes[0]);
    const bool expected = (b >= 0x20 && b < 0x80) || (b >= 0xc2 && b <= 0xf4);  // ASCII or a lead byte
    EXPECT_EQ(allowed[size_t(id)] != 0, expected) << "byte " << int(b);
    ++num_checked;
  }
  EXPECT_EQ(num_checked, 256);
  const int32_t newline = single_token(*tok, "\n");
  EXPECT_EQ(allowed[size_t(newline)], 0);  // raw control characters are not JSON
}

TEST(JsonSchemaConstraint, WindsDownWithinBudget) {
  REQUIRE_TOKENIZER();
  auto c = make_constraint(*tok, json::parse(R"({"type":"object","properties":{"a":{"type":"string"},
      "b":{"type":"array","items":{"type":"string"}}},"required":["a","b"]})"));
  ASSERT_TRUE(c->accept_bytes("{\"a\": \"some long text"));
  const int64_t needed = c->min_remaining_bytes();  // `","b":[]}` = 9 bytes
  EXPECT_EQ(needed, 9);
  int num_tokens = 0;
  std::mt19937_64 rng(7);
  std::vector<int32_t> ids;
  while (!c->is_complete() || c->can_continue()) {
    c->set_tokens_left(needed + 4 - num_tokens);
    ASSERT_LE(num_tokens, needed + 4);
    const std::vector<uint8_t>& allowed = c->compute_allowed();
    std::vector<int32_t> candidates;
    for (size_t i = 0; i < allowed.size(); ++i)
      if (allowed[i]) candidates.push_back(int32_t(i));
    ASSERT_FALSE(candidates.empty());
    const int32_t id = candidates[rng() % candidates.size()];
    c->accept_token(id);
    ids.push_back(id);
    ++num_tokens;
  }
  const json parsed = json::parse("{\"a\": \"some long text" + tok->decode(ids));
  EXPECT_TRUE(parsed["b"].is_array());
}

TEST(JsonSchemaConstraint, MaskCostOnQwen3Vocabulary) {
  REQUIRE_TOKENIZER();
  const json schema = json::parse(R"({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]})");
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  // Cold: a new request, its first mask inside a string (trie walk + building the transitions).
  const int num_repeats = 5;
  double cold_ms = 0;
  size_t num_allowed = 0;
  for (int i = 0; i < num_repeats; ++i) {
    auto c = make_constraint(*tok, schema);
    ASSERT_TRUE(c->accept_bytes("{\"text\": \"hello"));
    const auto start = Clock::now();
    const auto& allowed = c->compute_allowed();
    cold_ms += ms_since(start) / num_repeats;
    num_allowed = size_t(std::count(allowed.begin(), allowed.end(), uint8_t(1)));
  }
  // Warm: the same state again, as after every token that stays inside the string.
  auto c = make_constraint(*tok, schema);
  ASSERT_TRUE(c->accept_bytes("{\"text\": \"hello"));
  c->compute_allowed();
  const auto start = Clock::now();
  for (int i = 0; i < 20; ++i) c->compute_allowed();
  const double warm_ms = ms_since(start) / 20;
  std::printf("mask inside a string: first %.2f ms, repeated %.3f ms; %zu allowed of %d tokens (%d trie nodes)\n",
              cold_ms, warm_ms, num_allowed, tok->vocab_size(), VocabIndex::for_tokenizer(*tok)->num_nodes());
  EXPECT_GT(num_allowed, 100000u);  // nearly every token can continue a string
  EXPECT_LT(cold_ms, 200.0);        // generous: the target is a few ms; the machine may be loaded
  EXPECT_LT(warm_ms, 20.0);
}

}  // namespace
}  // namespace llmesh::grammar

namespace llmesh::grammar {
namespace {

// Per-token mask cost over a whole generation, with tokens drawn uniformly
// from the mask (what random weights do: the worst case for state reuse).
// Prints mean / p50 / p90 / max ms per token; asserts only a loose bound.
//   build/tests/llmesh_grammar_tests --gtest_filter='*PerTokenMaskCost*'
TEST(JsonSchemaConstraint, PerTokenMaskCost) {
  REQUIRE_TOKENIZER();
  const std::vector<std::pair<std::string, json>> schemas = {
      {"story", json::parse(R"({"type":"object","properties":{"title":{"type":"string"},"story":{"type":"string"}},
          "required":["title","story"]})")},
      {"records", json::parse(R"({"type":"array","minItems":3,"items":{"type":"object",
          "required":["id","name","age","city","active"],"properties":{"id":{"type":"integer"},
          "name":{"type":"string","maxLength":12},"age":{"type":"integer","minimum":0},
          "city":{"enum":["Paris","Tokyo","Lima","Oslo"]},"active":{"type":"boolean"}}}})")},
  };
  const int num_tokens = 150;
  std::vector<float> logits(151936);
  for (const auto& [name, schema] : schemas) {
    auto c = make_constraint(*tok, schema);
    std::mt19937_64 rng(42);
    std::vector<double> ms;
    std::vector<int32_t> candidates;
    for (int i = 0; i < num_tokens && !(c->is_complete() && !c->can_continue()); ++i) {
      c->set_tokens_left(num_tokens - i);
      std::fill(logits.begin(), logits.end(), 0.0f);
      const auto start = std::chrono::steady_clock::now();
      c->mask_logits(logits);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      candidates.clear();
      for (size_t t = 0; t < logits.size(); ++t)
        if (logits[t] == 0.0f) candidates.push_back(int32_t(t));
      ASSERT_FALSE(candidates.empty());
      c->accept_token(candidates[rng() % candidates.size()]);
    }
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    double mean = 0;
    for (double x : ms) mean += x / double(ms.size());
    std::printf("%-8s %zu tokens: mask mean %.2f ms, p50 %.2f, p90 %.2f, max %.2f\n", name.c_str(), ms.size(), mean,
                sorted[sorted.size() / 2], sorted[sorted.size() * 9 / 10], sorted.back());
    EXPECT_LT(mean, 100.0);
  }
}

}  // namespace
}  // namespace llmesh::grammar
