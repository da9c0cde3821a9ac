// JSON Schema -> grammar of the JSON texts that validate against it.
//
// Enforced: type (string, number, integer, boolean, null, object, array, or a
// list of them; `nullable`), enum, const, anyOf / oneOf (oneOf as anyOf),
// allOf (merged), $ref to #, #/$defs/… and #/definitions/… (recursion allowed),
// object properties with required / optional ones (emitted in the schema
// object's key order: callers parse schemas as ordered_json), additionalProperties
// (false or a schema when there is no "properties"; extra keys are never
// generated next to declared properties, and `"properties": {}` means `{}`), arrays with items / minItems /
// maxItems, string minLength / maxLength (up to kMaxBoundedLength),
// integer minimum 0 or 1 / exclusiveMinimum 0. `true` / `{}` = any JSON value.
//
// Everything else (pattern, format, numeric ranges, uniqueItems, …) is not
// enforced and is reported in `ignored` as "keyword at #/path". Layout:
// compact JSON, with one optional space after ':' and ','. Strings are valid
// UTF-8 with valid escapes (no lone surrogates); numbers have at most 16
// integer / 16 fraction / 2 exponent digits, so any JSON parser accepts them.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "grammar/grammar.h"

namespace llmesh::grammar {

inline constexpr int64_t kMaxBoundedLength = 512;

class JsonSchemaCompiler {
 public:
  // `root` is the schema $refs resolve against; it must outlive the compiler.
  // Problems with the schema itself (false, an unresolvable $ref, a bad type)
  // throw llmesh::Error naming the path.
  JsonSchemaCompiler(GrammarBuilder& builder, const nlohmann::ordered_json& root, std::vector<std::string>* ignored);

  // The JSON texts valid against the root schema.
  Symbol root_value() { return value(root_, "#"); }
  Symbol value(const nlohmann::ordered_json& schema, const std::string& path);
  Symbol any_value();
  Symbol string_value();                                     // any JSON string
  Symbol json_literal(const nlohmann::ordered_json& value);  // exactly this value, compact

 private:
  Symbol typed_value(const nlohmann::ordered_json& schema, const std::string& type, const std::string& path);
  Symbol object_value(const nlohmann::ordered_json& schema, const std::string& path);
  Symbol array_value(const nlohmann::ordered_json& schema, const std::string& path);
  Symbol string_with_length(const nlohmann::ordered_json& schema, const std::string& path);
  Symbol integer_value(const nlohmann::ordered_json& schema, const std::string& path);
  Symbol number_value(const nlohmann::ordered_json& schema, const std::string& path);
  Symbol reference(const std::string& ref, const std::string& path);
  Symbol string_char();
  Symbol separator();  // ',' then an optional space
  Symbol colon();      // ':' then an optional space
  void report(const std::string& keyword, const std::string& path);
  void report_unknown_keywords(const nlohmann::ordered_json& schema, const std::string& path);

  GrammarBuilder& b_;
  const nlohmann::ordered_json& root_;
  std::vector<std::string>* ignored_;
  std::unordered_map<std::string, int32_t> ref_rules_;  // $ref -> rule
  int num_allof_folds_ = 0;  // allOf folds on the current path: a self-referencing allOf would fold for ever
  int32_t any_rule_ = -1, string_rule_ = -1;
  Symbol string_char_{}, separator_{}, colon_{};
  bool have_string_char_ = false, have_separator_ = false;
};

// Convenience: the whole grammar for one schema.
Grammar json_schema_grammar(const nlohmann::ordered_json& schema, std::vector<std::string>* ignored);

}  // namespace llmesh::grammar
