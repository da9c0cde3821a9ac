#include "grammar/json_schema_grammar.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>

#include "core/error.h"

namespace llmesh::grammar {

using json = nlohmann::ordered_json;

namespace {

// Keywords that only describe (never restrict) or that the compiler handles in full.
const std::set<std::string>& handled_keywords() {
  static const std::set<std::string> keys = {
      // annotations
      "title", "description", "default", "examples", "$schema", "$id", "$comment", "deprecated", "readOnly",
      "writeOnly", "$defs", "definitions", "strict", "name", "$anchor",
      // enforced
      "type", "nullable", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "properties", "required",
      "additionalProperties", "items", "minItems", "maxItems", "minLength", "maxLength", "minimum", "exclusiveMinimum"};
  return keys;
}

bool is_annotation(const std::string& key) {
  static const std::set<std::string> keys = {"title", "description", "default",    "examples", "$schema",
                                             "$id",   "$comment",    "deprecated", "readOnly", "writeOnly",
                                             "$defs", "definitions", "strict",     "name",     "$anchor"};
  return keys.count(key) > 0;
}

std::string escape_pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

// allOf members folded into one schema: properties merged, required united, the rest last-wins.
void merge_into(json& target, const json& source) {
  for (const auto& [key, value] : source.items()) {
    if (key == "properties" && target.contains("properties") && target["properties"].is_object() && value.is_object()) {
      for (const auto& [name, sub] : value.items()) target["properties"][name] = sub;
    } else if (key == "required" && target.contains("required") && target["required"].is_array() && value.is_array()) {
      for (const auto& name : value)
        if (std::find(target["required"].begin(), target["required"].end(), name) == target["required"].end())
          target["required"].push_back(name);
    } else {
      target[key] = value;
    }
  }
}

std::optional<int64_t> optional_count(const json& schema, const char* key, const std::string& path) {
  auto it = schema.find(key);
  if (it == schema.end()) return std::nullopt;
  if (!it->is_number() || it->get<double>() < 0 || std::floor(it->get<double>()) != it->get<double>())
    fail("schema at {}: '{}' must be a non-negative integer", path, key);
  return int64_t(std::min(it->get<double>(), 1e15));
}

}  // namespace

JsonSchemaCompiler::JsonSchemaCompiler(GrammarBuilder& builder, const json& root, std::vector<std::string>* ignored)
    : b_(builder), root_(root), ignored_(ignored) {}

void JsonSchemaCompiler::report(const std::string& keyword, const std::string& path) {
  if (!ignored_) return;
  std::string entry = keyword + " at " + path;
  if (std::find(ignored_->begin(), ignored_->end(), entry) == ignored_->end()) ignored_->push_back(std::move(entry));
}

void JsonSchemaCompiler::report_unknown_keywords(const json& schema, const std::string& path) {
  for (const auto& item : schema.items())
    if (!handled_keywords().count(item.key())) report(item.key(), path);
}

Symbol JsonSchemaCompiler::separator() {
  if (!have_separator_) {
    separator_ = b_.sequence({b_.literal(","), b_.optional(b_.literal(" "))});
    colon_ = b_.sequence({b_.literal(":"), b_.optional(b_.literal(" "))});
    have_separator_ = true;
  }
  return separator_;
}

Symbol JsonSchemaCompiler::colon() {
  separator();
  return colon_;
}

Symbol JsonSchemaCompiler::string_char() {
  if (have_string_char_) return string_char_;
  const ByteSet cont = ByteSet::range(0x80, 0xbf);
  ByteSet ascii = ByteSet::range(0x20, 0x7f);
  ascii.remove('"');
  ascii.remove('\\');
  ByteSet hex = ByteSet::range('0', '9') | ByteSet::range('a', 'f') | ByteSet::range('A', 'F');
  ByteSet hex_first_plain = ByteSet::range('0', '9') | ByteSet::range('a', 'c') | ByteSet::range('A', 'C');
  hex_first_plain.add('e'), hex_first_plain.add('f'), hex_first_plain.add('E'), hex_first_plain.add('F');
  const ByteSet d = ByteSet::single('d') | ByteSet::single('D');
  const ByteSet high = ByteSet::range('8', '9') | ByteSet::range('a', 'b') | ByteSet::range('A', 'B');
  const ByteSet low = ByteSet::range('c', 'f') | ByteSet::range('C', 'F');
  ByteSet simple_escape;
  for (char c : std::string("\"\\/bfnrt")) simple_escape.add(uint8_t(c));
  const Symbol h = b_.bytes(hex);
  // \uXXXX outside the surrogates, or a high surrogate followed by a low one (lone surrogates break parsers).
  const Symbol unicode = b_.choice({
      b_.sequence({b_.bytes(hex_first_plain), h, h, h}),
      b_.sequence({b_.bytes(d), b_.bytes(ByteSet::range('0', '7')), h, h}),
      b_.sequence({b_.bytes(d), b_.bytes(high), h, h, b_.literal("\\u"), b_.bytes(d), b_.bytes(low), h, h}),
  });
  const Symbol escape =
      b_.sequence({b_.literal("\\"), b_.choice({b_.bytes(simple_escape), b_.sequence({b_.literal("u"), unicode})})});
  const Symbol c = b_.bytes(cont);
  ByteSet e1_ec = ByteSet::range(0xe1, 0xec) | ByteSet::range(0xee, 0xef);
  // Well-formed UTF-8 only (RFC 3629 table): JSON parsers reject the rest.
  string_char_ = b_.choice({
      b_.bytes(ascii),
      b_.sequence({b_.bytes(ByteSet::range(0xc2, 0xdf)), c}),
      b_.sequence({b_.bytes(ByteSet::single(0xe0)), b_.bytes(ByteSet::range(0xa0, 0xbf)), c}),
      b_.sequence({b_.bytes(e1_ec), c, c}),
      b_.sequence({b_.bytes(ByteSet::single(0xed)), b_.bytes(ByteSet::range(0x80, 0x9f)), c}),
      b_.sequence({b_.bytes(ByteSet::single(0xf0)), b_.bytes(ByteSet::range(0x90, 0xbf)), c, c}),
      b_.sequence({b_.bytes(ByteSet::range(0xf1, 0xf3)), c, c, c}),
      b_.sequence({b_.bytes(ByteSet::single(0xf4)), b_.bytes(ByteSet::range(0x80, 0x8f)), c, c}),
      escape,
  });
  have_string_char_ = true;
  return string_char_;
}

Symbol JsonSchemaCompiler::string_value() {
  if (string_rule_ < 0) {
    // chars ::= char chars | ()   — written out so each character costs no extra stack frame.
    const int32_t chars = b_.declare_rule("string_chars");
    b_.define_rule(chars, b_.choice({b_.sequence({string_char(), b_.rule(chars)}), b_.empty()}));
    string_rule_ = b_.declare_rule("string");
    b_.define_rule(string_rule_, b_.sequence({b_.literal("\""), b_.rule(chars), b_.literal("\"")}));
  }
  return b_.rule(string_rule_);
}

Symbol JsonSchemaCompiler::json_literal(const json& value) { return b_.literal(value.dump()); }

Symbol JsonSchemaCompiler::any_value() {
  if (any_rule_ >= 0) return b_.rule(any_rule_);
  any_rule_ = b_.declare_rule("value");
  const Symbol v = b_.rule(any_rule_);
  const Symbol member = b_.sequence({string_value(), colon(), v});
  const Symbol object =
      b_.sequence({b_.literal("{"),
                   b_.optional(b_.sequence({member, b_.repeat(b_.sequence({separator(), member}), 0, kUnbounded)})),
                   b_.literal("}")});
  const Symbol array = b_.sequence(
      {b_.literal("["), b_.optional(b_.sequence({v, b_.repeat(b_.sequence({separator(), v}), 0, kUnbounded)})),
       b_.literal("]")});
  b_.define_rule(any_rule_, b_.choice({object, array, string_value(), number_value(json::object(), "#"),
                                       b_.literal("true"), b_.literal("false"), b_.literal("null")}));
  return v;
}

Symbol JsonSchemaCompiler::reference(const std::string& ref, const std::string& path) {
  if (auto it = ref_rules_.find(ref); it != ref_rules_.end()) return b_.rule(it->second);
  if (ref.empty() || ref[0] != '#') fail("schema at {}: only local $refs (#/…) are supported, got '{}'", path, ref);
  const json* target = &root_;
  if (ref.size() > 1) {
    try {
      target = &root_.at(json::json_pointer(ref.substr(1)));
    } catch (const std::exception&) {
      fail("schema at {}: $ref '{}' points nowhere", path, ref);
    }
  }
  const int32_t rule_id = b_.declare_rule("ref" + std::to_string(ref_rules_.size()));
  ref_rules_[ref] = rule_id;
  b_.define_rule(rule_id, value(*target, ref));
  return b_.rule(rule_id);
}

Symbol JsonSchemaCompiler::value(const json& schema, const std::string& path) {
  if (schema.is_boolean()) {
    if (!schema.get<bool>()) fail("schema at {} is false: no value validates", path);
    return any_value();
  }
  if (!schema.is_object()) fail("schema at {} must be an object or a boolean, got {}", path, schema.type_name());
  if (auto ref = schema.find("$ref"); ref != schema.end()) {
    if (!ref->is_string()) fail("schema at {}: '$ref' must be a string", path);
    for (const auto& item : schema.items())
      if (item.key() != "$ref" && !is_annotation(item.key())) report(item.key() + " (next to $ref)", path);
    return reference(ref->get<std::string>(), path);
  }
  if (auto all = schema.find("allOf"); all != schema.end()) {
    if (!all->is_array() || all->empty()) fail("schema at {}: 'allOf' must be a non-empty array", path);
    json merged = schema;
    merged.erase("allOf");
    for (size_t i = 0; i < all->size(); ++i) {
      const json* sub = &(*all)[i];
      // Follow a $ref member so its keywords can be merged.
      for (int hops = 0; sub->is_object() && sub->contains("$ref") && hops < 16; ++hops) {
        const std::string ref = (*sub)["$ref"].is_string() ? (*sub)["$ref"].get<std::string>() : "";
        if (ref.empty() || ref[0] != '#') fail("schema at {}/allOf/{}: unsupported $ref", path, i);
        try {
          sub = ref.size() > 1 ? &root_.at(json::json_pointer(ref.substr(1))) : &root_;
        } catch (const std::exception&) {
          fail("schema at {}/allOf/{}: $ref '{}' points nowhere", path, i, ref);
        }
      }
      if (sub->is_boolean()) {
        if (!sub->get<bool>()) fail("schema at {}/allOf/{} is false: no value validates", path, i);
        continue;
      }
      if (!sub->is_object()) fail("schema at {}/allOf/{} must be an object", path, i);
      merge_into(merged, *sub);
    }
    // A member's own allOf folds in turn; one that refers back to itself never ends.
    constexpr int kMaxAllOfFolds = 32;
    if (num_allof_folds_ >= kMaxAllOfFolds)
      fail("schema at {}: allOf nested more than {} deep (does it refer to itself?)", path, kMaxAllOfFolds);
    ++num_allof_folds_;
    struct Unfold {
      int& n;
      ~Unfold() { --n; }
    } unfold{num_allof_folds_};
    return value(merged, path);
  }
  for (const char* key : {"anyOf", "oneOf"}) {
    auto options = schema.find(key);
    if (options == schema.end()) continue;
    if (!options->is_array() || options->empty()) fail("schema at {}: '{}' must be a non-empty array", path, key);
    if (std::string(key) == "oneOf" && options->size() > 1) report("oneOf (enforced as anyOf)", path);
    json base = schema;
    base.erase("anyOf");
    base.erase("oneOf");
    bool base_constrains = false;
    for (const auto& item : base.items()) base_constrains = base_constrains || !is_annotation(item.key());
    std::vector<Symbol> alternatives;
    for (size_t i = 0; i < options->size(); ++i) {
      const std::string sub_path = fmt::format("{}/{}/{}", path, key, i);
      const json& option = (*options)[i];
      if (option.is_boolean() && !option.get<bool>()) continue;  // matches nothing: drop it
      if (!base_constrains || !option.is_object()) {
        alternatives.push_back(value(option, sub_path));
      } else {
        json merged = base;
        merge_into(merged, option);
        alternatives.push_back(value(merged, sub_path));
      }
    }
    if (alternatives.empty()) fail("schema at {}: every '{}' option is false", path, key);
    return b_.choice(alternatives);
  }
  report_unknown_keywords(schema, path);
  if (auto c = schema.find("const"); c != schema.end()) return json_literal(*c);
  if (auto e = schema.find("enum"); e != schema.end()) {
    if (!e->is_array() || e->empty()) fail("schema at {}: 'enum' must be a non-empty array", path);
    std::vector<Symbol> options;
    for (const auto& v : *e) options.push_back(json_literal(v));
    return b_.choice(options);
  }

  std::vector<std::string> types;
  if (auto t = schema.find("type"); t != schema.end()) {
    if (t->is_string()) {
      types.push_back(t->get<std::string>());
    } else if (t->is_array() && !t->empty()) {
      for (const auto& one : *t) {
        if (!one.is_string()) fail("schema at {}: 'type' entries must be strings", path);
        types.push_back(one.get<std::string>());
      }
    } else {
      fail("schema at {}: 'type' must be a string or a non-empty array of strings", path);
    }
  } else {
    auto has = [&](std::initializer_list<const char*> keys) {
      for (const char* k : keys)
        if (schema.contains(k)) return true;
      return false;
    };
    if (has({"properties", "required", "additionalProperties"}))
      types.push_back("object");
    else if (has({"items", "minItems", "maxItems"}))
      types.push_back("array");
    else if (has({"minLength", "maxLength"}))
      types.push_back("string");
    else
      return any_value();
  }
  const auto nullable = schema.find("nullable");  // not value(): it throws a type_error for a non-boolean
  if (nullable != schema.end() && !nullable->is_boolean() && !nullable->is_null())
    fail("schema at {}: nullable must be a boolean, got {}", path, nullable->type_name());
  if (nullable != schema.end() && nullable->is_boolean() && nullable->get<bool>() &&
      std::find(types.begin(), types.end(), "null") == types.end())
    types.push_back("null");
  std::vector<Symbol> alternatives;
  for (const std::string& type : types) alternatives.push_back(typed_value(schema, type, path));
  return b_.choice(alternatives);
}

Symbol JsonSchemaCompiler::typed_value(const json& schema, const std::string& type, const std::string& path) {
  if (type == "string") return string_with_length(schema, path);
  if (type == "integer") return integer_value(schema, path);
  if (type == "number") return number_value(schema, path);
  if (type == "boolean") return b_.choice({b_.literal("true"), b_.literal("false")});
  if (type == "null") return b_.literal("null");
  if (type == "object") return object_value(schema, path);
  if (type == "array") return array_value(schema, path);
  fail("schema at {}: unknown type '{}'", path, type);
}

Symbol JsonSchemaCompiler::string_with_length(const json& schema, const std::string& path) {
  const int64_t min_length = optional_count(schema, "minLength", path).value_or(0);
  int64_t max_length = optional_count(schema, "maxLength", path).value_or(kUnbounded);
  if (max_length < min_length) fail("schema at {}: maxLength is below minLength", path);
  if (max_length != kUnbounded && max_length > kMaxBoundedLength) {
    report("maxLength (above " + std::to_string(kMaxBoundedLength) + ")", path);
    max_length = kUnbounded;
  }
  if (min_length > kMaxBoundedLength)
    fail("schema at {}: minLength above {} is not supported", path, kMaxBoundedLength);
  if (min_length == 0 && max_length == kUnbounded) return string_value();
  return b_.sequence({b_.literal("\""), b_.repeat(string_char(), min_length, max_length), b_.literal("\"")});
}

Symbol JsonSchemaCompiler::integer_value(const json& schema, const std::string& path) {
  // The lowest value allowed, when it is 0 or 1 (what tool schemas use); other bounds are reported.
  std::optional<int64_t> lowest;
  if (auto m = schema.find("minimum"); m != schema.end() && m->is_number()) {
    const double x = m->get<double>();
    if (x > 1) report("minimum", path);
    if (x > 0)
      lowest = 1;
    else if (x > -1)
      lowest = 0;
    else
      report("minimum", path);
  }
  if (auto m = schema.find("exclusiveMinimum"); m != schema.end() && m->is_number()) {
    const double x = m->get<double>();
    if (x > 0) report("exclusiveMinimum", path);
    if (x >= 0)
      lowest = 1;
    else if (x >= -1)
      lowest = std::max<int64_t>(lowest.value_or(0), 0);
    else
      report("exclusiveMinimum", path);
  }
  for (const char* key : {"maximum", "exclusiveMaximum", "multipleOf"})
    if (schema.contains(key)) report(key, path);
  const Symbol digit = b_.bytes(ByteSet::range('0', '9'));
  const Symbol positive = b_.sequence({b_.bytes(ByteSet::range('1', '9')), b_.repeat(digit, 0, 15)});
  if (lowest == 1) return positive;
  const Symbol natural = b_.choice({b_.literal("0"), positive});
  if (lowest == 0) return natural;
  return b_.sequence({b_.optional(b_.literal("-")), natural});
}

Symbol JsonSchemaCompiler::number_value(const json& schema, const std::string& path) {
  for (const char* key : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})
    if (schema.contains(key)) report(key, path);
  const Symbol digit = b_.bytes(ByteSet::range('0', '9'));
  const Symbol natural =
      b_.choice({b_.literal("0"), b_.sequence({b_.bytes(ByteSet::range('1', '9')), b_.repeat(digit, 0, 15)})});
  const Symbol fraction = b_.sequence({b_.literal("."), b_.repeat(digit, 1, 16)});
  const Symbol exponent =
      b_.sequence({b_.bytes(ByteSet::single('e') | ByteSet::single('E')),
                   b_.optional(b_.bytes(ByteSet::single('+') | ByteSet::single('-'))), b_.repeat(digit, 1, 2)});
  return b_.sequence({b_.optional(b_.literal("-")), natural, b_.optional(fraction), b_.optional(exponent)});
}

Symbol JsonSchemaCompiler::object_value(const json& schema, const std::string& path) {
  for (const char* key : {"patternProperties", "propertyNames", "minProperties", "maxProperties", "dependentRequired",
                          "dependentSchemas", "unevaluatedProperties"})
    if (schema.contains(key)) report(key, path);
  struct Property {
    std::string name;
    Symbol value;
    bool required;
  };
  std::set<std::string> required;
  if (auto r = schema.find("required"); r != schema.end()) {
    if (!r->is_array()) fail("schema at {}: 'required' must be an array of strings", path);
    for (const auto& name : *r) {
      if (!name.is_string()) fail("schema at {}: 'required' must be an array of strings", path);
      required.insert(name.get<std::string>());
    }
  }
  std::vector<Property> properties;
  const json* declared = nullptr;
  if (auto p = schema.find("properties"); p != schema.end()) {
    if (!p->is_object()) fail("schema at {}: 'properties' must be an object", path);
    declared = &*p;
    for (const auto& [name, sub] : p->items()) {
      properties.push_back(
          {name, value(sub, path + "/properties/" + escape_pointer_token(name)), required.count(name) > 0});
    }
  }
  for (const std::string& name : required) {  // required but not described: any value
    if (!declared || !declared->contains(name)) properties.push_back({name, any_value(), true});
  }

  if (properties.empty()) {
    auto additional = schema.find("additionalProperties");
    // `"properties": {}` (a tool without parameters) or additionalProperties false: nothing to put in.
    if (declared || (additional != schema.end() && additional->is_boolean() && !additional->get<bool>())) {
      return b_.literal("{}");
    }
    const Symbol member_value = additional == schema.end() || additional->is_boolean()
                                    ? any_value()
                                    : value(*additional, path + "/additionalProperties");
    const Symbol member = b_.sequence({string_value(), colon(), member_value});
    return b_.sequence(
        {b_.literal("{"),
         b_.optional(b_.sequence({member, b_.repeat(b_.sequence({separator(), member}), 0, kUnbounded)})),
         b_.literal("}")});
  }

  // rest(i, first): properties i.. in order; `first` = none emitted yet (no comma before the next).
  const size_t n = properties.size();
  std::vector<std::optional<Symbol>> memo(2 * (n + 1));
  std::function<Symbol(size_t, bool)> rest = [&](size_t i, bool first) -> Symbol {
    std::optional<Symbol>& slot = memo[2 * i + (first ? 1 : 0)];
    if (slot) return *slot;
    if (i == n) return *(slot = b_.empty());
    const Property& p = properties[i];
    const Symbol member = b_.sequence({json_literal(json(p.name)), colon(), p.value});
    const Symbol with =
        first ? b_.sequence({member, rest(i + 1, false)}) : b_.sequence({separator(), member, rest(i + 1, false)});
    slot = p.required ? with : b_.choice({with, rest(i + 1, first)});
    return *slot;
  };
  return b_.sequence({b_.literal("{"), rest(0, true), b_.literal("}")});
}

Symbol JsonSchemaCompiler::array_value(const json& schema, const std::string& path) {
  for (const char* key : {"uniqueItems", "contains", "minContains", "maxContains", "prefixItems", "unevaluatedItems"})
    if (schema.contains(key)) report(key, path);
  Symbol item;
  auto items = schema.find("items");
  if (items == schema.end())
    item = any_value();
  else if (items->is_array()) {  // draft-04 tuple form: not enforced per position
    report("items (tuple form)", path);
    item = any_value();
  } else if (items->is_boolean() && !items->get<bool>()) {
    return b_.literal("[]");
  } else {
    item = value(*items, path + "/items");
  }
  const int64_t min_items = optional_count(schema, "minItems", path).value_or(0);
  int64_t max_items = optional_count(schema, "maxItems", path).value_or(kUnbounded);
  if (max_items < min_items) fail("schema at {}: maxItems is below minItems", path);
  if (max_items != kUnbounded && max_items > kMaxBoundedLength) {
    report("maxItems (above " + std::to_string(kMaxBoundedLength) + ")", path);
    max_items = kUnbounded;
  }
  if (min_items > kMaxBoundedLength) fail("schema at {}: minItems above {} is not supported", path, kMaxBoundedLength);
  if (max_items == 0) return b_.literal("[]");
  const int64_t more_min = std::max<int64_t>(min_items, 1) - 1;
  const int64_t more_max = max_items == kUnbounded ? kUnbounded : max_items - 1;
  const Symbol list = b_.sequence({item, b_.repeat(b_.sequence({separator(), item}), more_min, more_max)});
  return b_.sequence({b_.literal("["), min_items == 0 ? b_.optional(list) : list, b_.literal("]")});
}

Grammar json_schema_grammar(const json& schema, std::vector<std::string>* ignored) {
  GrammarBuilder builder;
  JsonSchemaCompiler compiler(builder, schema, ignored);
  return builder.build(compiler.root_value());
}

}  // namespace llmesh::grammar
