#include "text/tool_call_format.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include <nlohmann/json.hpp>

#include "text/tokenizer.h"

namespace llmesh::text {

namespace {

constexpr std::string_view kHermesCallOpen = "<tool_call>";
constexpr std::string_view kDeepSeekCallsBegin = "<｜tool▁calls▁begin｜>";
constexpr std::string_view kDeepSeekCallsEnd = "<｜tool▁calls▁end｜>";
constexpr std::string_view kDeepSeekCallBegin = "<｜tool▁call▁begin｜>";
constexpr std::string_view kDeepSeekCallEnd = "<｜tool▁call▁end｜>";
constexpr std::string_view kDeepSeekSep = "<｜tool▁sep｜>";
constexpr std::string_view kQwenFunctionOpen = "<function=";
constexpr std::string_view kQwenFunctionClose = "</function>";
constexpr std::string_view kQwenParameterOpen = "<parameter=";
constexpr std::string_view kQwenParameterClose = "</parameter>";
constexpr std::string_view kGlmKeyOpen = "<arg_key>";
constexpr std::string_view kGlmKeyClose = "</arg_key>";
constexpr std::string_view kGlmValueOpen = "<arg_value>";
constexpr std::string_view kGlmValueClose = "</arg_value>";

bool contains(std::string_view text, std::string_view needle) { return text.find(needle) != std::string_view::npos; }

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// The arguments of a call as compact JSON object text; false when they are
// neither an object nor a string holding one.
bool arguments_text(const nlohmann::json& arguments, std::string* arguments_json) {
  if (arguments.is_object()) {
    *arguments_json = arguments.dump();
    return true;
  }
  if (!arguments.is_string()) return false;
  const std::string& text = arguments.get_ref<const std::string&>();
  // Some models serialize the object themselves; keep their text, but only if it is an object.
  if (!nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false).is_object()) return false;
  *arguments_json = text;
  return true;
}

// {"name": …, "arguments"|"parameters": …}; `require_arguments` for formats
// where a bare {"name": …} is more likely ordinary JSON output than a call.
bool parse_json_call(std::string_view body, bool require_arguments, std::string* name, std::string* arguments_json) {
  const nlohmann::json parsed = nlohmann::json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return false;
  auto name_it = parsed.find("name");
  if (name_it == parsed.end() || !name_it->is_string() || name_it->get_ref<const std::string&>().empty()) return false;
  auto arguments = parsed.find("arguments");
  if (arguments == parsed.end()) arguments = parsed.find("parameters");
  std::string arguments_out = "{}";
  if (arguments == parsed.end()) {
    if (require_arguments) return false;
  } else if (!arguments_text(*arguments, &arguments_out)) {
    return false;
  }
  *name = name_it->get<std::string>();
  *arguments_json = std::move(arguments_out);
  return true;
}

bool is_function_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (is_space(c) || c == '{' || c == '}' || c == '`') return false;
  }
  return true;
}

// V3:   function<｜tool▁sep｜>NAME\n```json\n{…}\n```
// V3.1: NAME<｜tool▁sep｜>{…}
bool parse_deepseek_call(std::string_view body, std::string* name, std::string* arguments_json) {
  const size_t sep = body.find(kDeepSeekSep);
  if (sep == std::string_view::npos) return false;
  const std::string_view before = trim(body.substr(0, sep));
  std::string_view after = trim(body.substr(sep + kDeepSeekSep.size()));
  std::string_view function_name;
  std::string_view arguments;
  if (!after.empty() && after.front() == '{') {
    function_name = before;
    arguments = after;
  } else {
    const size_t newline = after.find('\n');
    if (newline == std::string_view::npos) return false;
    function_name = trim(after.substr(0, newline));
    arguments = trim(after.substr(newline + 1));
    // The arguments sit in a ```json fence (the fence is optional here, for leniency).
    if (arguments.substr(0, 3) == "```") {
      const size_t fence_end = arguments.find('\n');
      if (fence_end == std::string_view::npos) return false;
      arguments = arguments.substr(fence_end + 1);
      if (arguments.size() < 3 || arguments.substr(arguments.size() - 3) != "```") return false;
      arguments = trim(arguments.substr(0, arguments.size() - 3));
    }
  }
  if (!is_function_name(function_name)) return false;
  const nlohmann::json parsed =
      nlohmann::json::parse(arguments.begin(), arguments.end(), nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return false;
  *name = std::string(function_name);
  *arguments_json = parsed.dump();
  return true;
}


using OrderedJson = nlohmann::ordered_json;

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

std::string_view skip_blanks(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  return text;
}

// The bit of a parsed JSON value's type (integers are numbers too: see allows()).
JsonTypes type_bit(const OrderedJson& value) {
  switch (value.type()) {
    case OrderedJson::value_t::string: return kJsonString;
    case OrderedJson::value_t::number_integer:
    case OrderedJson::value_t::number_unsigned: return kJsonInteger;
    case OrderedJson::value_t::number_float: return kJsonNumber;
    case OrderedJson::value_t::boolean: return kJsonBoolean;
    case OrderedJson::value_t::object: return kJsonObject;
    case OrderedJson::value_t::array: return kJsonArray;
    case OrderedJson::value_t::null: return kJsonNull;
    default: return 0;
  }
}

bool allows(JsonTypes types, const OrderedJson& value) {
  const JsonTypes bit = type_bit(value);
  if (bit == kJsonInteger && (types & kJsonNumber)) return true;
  return (types & bit) != 0;
}

JsonTypes type_name_bit(const OrderedJson& name) {
  if (!name.is_string()) return 0;
  const std::string& n = name.get_ref<const std::string&>();
  if (n == "string") return kJsonString;
  if (n == "integer") return kJsonInteger;
  if (n == "number") return kJsonNumber;
  if (n == "boolean") return kJsonBoolean;
  if (n == "object") return kJsonObject;
  if (n == "array") return kJsonArray;
  if (n == "null") return kJsonNull;
  return 0;
}

JsonTypes schema_types(const OrderedJson& schema, const OrderedJson& root, int depth) {
  if (!schema.is_object() || depth > 16) return 0;
  if (auto ref = schema.find("$ref"); ref != schema.end() && ref->is_string()) {
    const std::string& path = ref->get_ref<const std::string&>();
    if (path.empty() || path[0] != '#') return 0;
    const OrderedJson* target = &root;
    if (path.size() > 1) {
      try {
        target = &root.at(OrderedJson::json_pointer(path.substr(1)));
      } catch (const std::exception&) {
        return 0;
      }
    }
    return schema_types(*target, root, depth + 1);
  }
  JsonTypes types = 0;
  if (auto type = schema.find("type"); type != schema.end()) {
    if (type->is_array()) {
      for (const auto& name : *type) types |= type_name_bit(name);
    } else {
      types = type_name_bit(*type);
    }
  } else if (auto values = schema.find("enum"); values != schema.end() && values->is_array()) {
    for (const auto& value : *values) types |= type_bit(value);
  } else if (auto value = schema.find("const"); value != schema.end()) {
    types = type_bit(*value);
  } else {
    for (const char* key : {"anyOf", "oneOf"}) {
      auto options = schema.find(key);
      if (options == schema.end() || !options->is_array()) continue;
      for (const auto& option : *options) {
        const JsonTypes option_types = schema_types(option, root, depth + 1);
        if (option_types == 0) return 0;  // one option allows anything: so does the union
        types |= option_types;
      }
    }
    if (auto parts = schema.find("allOf"); types == 0 && parts != schema.end() && parts->is_array()) {
      JsonTypes all = 0xFF;
      for (const auto& part : *parts) {
        const JsonTypes part_types = schema_types(part, root, depth + 1);
        if (part_types != 0) all &= part_types;
      }
      types = all == 0xFF ? 0 : all;
    }
  }
  if (types != 0) {
    if (auto nullable = schema.find("nullable"); nullable != schema.end() && nullable->is_boolean() && *nullable)
      types |= kJsonNull;
  }
  return types;
}

// Python literals as JSON: True / False / None outside double-quoted strings.
std::string python_literals_as_json(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  bool escaped = false;
  auto word_at = [&](size_t i, std::string_view word) {
    if (text.substr(i, word.size()) != word) return false;
    const auto is_word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    if (i > 0 && is_word_char(text[i - 1])) return false;
    const size_t end = i + word.size();
    return end >= text.size() || !is_word_char(text[end]);
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
    } else if (word_at(i, "True")) {
      out += "true";
      i += 3;
    } else if (word_at(i, "False")) {
      out += "false";
      i += 4;
    } else if (word_at(i, "None")) {
      out += "null";
      i += 3;
    } else {
      out += c;
    }
  }
  return out;
}

// Raw values may hold invalid UTF-8 (a model's bytes, not JSON it wrote): U+FFFD
// instead of throwing.
std::string dump_arguments(const OrderedJson& arguments) {
  return arguments.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

bool is_argument_key(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key)
    if (c == '<' || c == '>' || c == '\n' || c == '\r') return false;
  return true;
}

// <function=NAME> (<parameter=KEY>VALUE</parameter>)* </function>
bool parse_qwen3_coder_call(std::string_view body, const ToolParameterTypes* types, std::string* name,
                            std::string* arguments_json) {
  std::string_view rest = skip_blanks(body);
  if (!starts_with(rest, kQwenFunctionOpen)) return false;
  rest.remove_prefix(kQwenFunctionOpen.size());
  const size_t name_end = rest.find('>');
  if (name_end == std::string_view::npos) return false;
  const std::string function_name(trim(rest.substr(0, name_end)));
  if (!is_function_name(function_name) || function_name.find('<') != std::string::npos) return false;
  rest.remove_prefix(name_end + 1);
  OrderedJson arguments = OrderedJson::object();
  for (;;) {
    rest = skip_blanks(rest);
    if (rest.empty()) break;  // </function> left out: the call ends with the body
    if (starts_with(rest, kQwenFunctionClose)) {
      if (!skip_blanks(rest.substr(kQwenFunctionClose.size())).empty()) return false;
      break;
    }
    if (!starts_with(rest, kQwenParameterOpen)) return false;
    rest.remove_prefix(kQwenParameterOpen.size());
    const size_t key_end = rest.find('>');
    if (key_end == std::string_view::npos) return false;
    const std::string key(trim(rest.substr(0, key_end)));
    if (!is_argument_key(key)) return false;
    rest.remove_prefix(key_end + 1);
    const size_t value_end = rest.find(kQwenParameterClose);
    if (value_end == std::string_view::npos) return false;
    std::string_view value = rest.substr(0, value_end);
    rest.remove_prefix(value_end + kQwenParameterClose.size());
    // The template's layout: a newline after the opening tag and one before the closing tag.
    if (starts_with(value, "\n")) value.remove_prefix(1);
    if (!value.empty() && value.back() == '\n') value.remove_suffix(1);
    arguments[key] = typed_argument_value(value, types ? types->lookup(function_name, key) : 0);
  }
  *name = function_name;
  *arguments_json = dump_arguments(arguments);
  return true;
}

// NAME (<arg_key>KEY</arg_key> <arg_value>VALUE</arg_value>)*
bool parse_glm45_call(std::string_view body, const ToolParameterTypes* types, std::string* name,
                      std::string* arguments_json) {
  const size_t first_key = body.find(kGlmKeyOpen);
  const std::string function_name(trim(body.substr(0, first_key)));
  if (!is_function_name(function_name) || function_name.find('<') != std::string::npos) return false;
  std::string_view rest = first_key == std::string_view::npos ? std::string_view() : body.substr(first_key);
  OrderedJson arguments = OrderedJson::object();
  for (;;) {
    rest = skip_blanks(rest);
    if (rest.empty()) break;
    if (!starts_with(rest, kGlmKeyOpen)) return false;
    rest.remove_prefix(kGlmKeyOpen.size());
    const size_t key_end = rest.find(kGlmKeyClose);
    if (key_end == std::string_view::npos) return false;
    const std::string key(trim(rest.substr(0, key_end)));
    if (!is_argument_key(key)) return false;
    rest = skip_blanks(rest.substr(key_end + kGlmKeyClose.size()));
    if (!starts_with(rest, kGlmValueOpen)) return false;
    rest.remove_prefix(kGlmValueOpen.size());
    const size_t value_end = rest.find(kGlmValueClose);
    if (value_end == std::string_view::npos) return false;
    arguments[key] = typed_argument_value(rest.substr(0, value_end), types ? types->lookup(function_name, key) : 0);
    rest.remove_prefix(value_end + kGlmValueClose.size());
  }
  *name = function_name;
  *arguments_json = dump_arguments(arguments);
  return true;
}

// One Mistral call: an element of the v3 array ({"name", "arguments", "id"}), or v11's
// NAME[ARGS]{…} with an optional [CALL_ID]ID before [ARGS].
bool parse_mistral_call(std::string_view body, std::string* name, std::string* arguments_json) {
  body = trim(body);
  if (!body.empty() && body.front() == '{')
    return parse_json_call(body, /*require_arguments=*/false, name, arguments_json);
  const size_t args = body.find(kMistralArgs);
  if (args == std::string_view::npos) return false;
  std::string_view head = body.substr(0, args);
  if (const size_t id = head.find(kMistralCallId); id != std::string_view::npos) head = head.substr(0, id);
  head = trim(head);
  if (head.empty() || head.find_first_of(" \t\r\n{}[]\"") != std::string_view::npos) return false;
  const std::string_view rest = trim(body.substr(args + kMistralArgs.size()));
  const nlohmann::json arguments = nlohmann::json::parse(rest.begin(), rest.end(), nullptr, /*allow_exceptions=*/false);
  if (!arguments_text(arguments, arguments_json)) return false;
  *name = std::string(head);
  return true;
}

// [assistant][ to=functions.NAME]<|channel|>commentary[ to=functions.NAME][ <|constrain|>json]<|message|>{…}
bool parse_harmony_call(std::string_view message, std::string* name, std::string* arguments_json) {
  const size_t body = message.find(kHarmonyMessage);
  if (body == std::string_view::npos) return false;
  const HarmonyHeader header = parse_harmony_header(message.substr(0, body));
  if (!starts_with(header.recipient, kHarmonyFunctions)) return false;
  const std::string function_name = header.recipient.substr(kHarmonyFunctions.size());
  if (!is_function_name(function_name)) return false;
  const std::string_view arguments = trim(message.substr(body + kHarmonyMessage.size()));
  const nlohmann::json parsed =
      nlohmann::json::parse(arguments.begin(), arguments.end(), nullptr, /*allow_exceptions=*/false);
  std::string arguments_out;
  if (!arguments_text(parsed, &arguments_out)) return false;
  *name = function_name;
  *arguments_json = std::move(arguments_out);
  return true;
}

}  // namespace

JsonTypes json_types_of_schema(const nlohmann::ordered_json& schema, const nlohmann::ordered_json& root) {
  return schema_types(schema, root, 0);
}

JsonTypes ToolParameterTypes::lookup(const std::string& tool, const std::string& parameter) const {
  const auto t = tools.find(tool);
  if (t == tools.end()) return 0;
  const auto p = t->second.find(parameter);
  return p == t->second.end() ? 0 : p->second;
}

ToolParameterTypes ToolParameterTypes::from_tools(const nlohmann::ordered_json& tools) {
  ToolParameterTypes table;
  if (!tools.is_array()) return table;
  for (const auto& tool : tools) {
    if (!tool.is_object()) continue;
    const OrderedJson& function = tool.contains("function") && tool["function"].is_object() ? tool["function"] : tool;
    if (!function.contains("name") || !function["name"].is_string()) continue;
    const OrderedJson* schema = nullptr;
    for (const char* key : {"parameters", "input_schema"})
      if (function.contains(key) && function[key].is_object()) schema = &function[key];
    if (schema == nullptr || !schema->contains("properties") || !(*schema)["properties"].is_object()) continue;
    auto& parameters = table.tools[function["name"].get<std::string>()];
    for (const auto& [key, property] : (*schema)["properties"].items())
      parameters[key] = json_types_of_schema(property, *schema);
  }
  return table;
}

nlohmann::ordered_json typed_argument_value(std::string_view raw, JsonTypes types) {
  if (types == 0) return OrderedJson(std::string(raw));
  const std::string_view text = trim(raw);
  if (types & kJsonString) {
    if ((types & kJsonNull) && (text == "null" || text == "None")) return nullptr;
    return OrderedJson(std::string(raw));
  }
  OrderedJson parsed = OrderedJson::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    const std::string converted = python_literals_as_json(text);
    parsed = OrderedJson::parse(converted, nullptr, /*allow_exceptions=*/false);
  }
  if (!parsed.is_discarded() && allows(types, parsed)) return parsed;
  return OrderedJson(std::string(raw));
}

ToolCallFormat detect_tool_call_format(std::string_view source) {
  // Harmony's framing tokens; its templates show no other format's markers.
  if (contains(source, kHarmonyChannel) && contains(source, "<|start|>assistant")) return ToolCallFormat::Harmony;
  // Both XML templates also contain Hermes's <tool_call>: they come first.
  if (contains(source, kQwenFunctionOpen) && contains(source, kQwenParameterOpen)) return ToolCallFormat::Qwen3CoderXml;
  if (contains(source, kGlmKeyOpen)) return ToolCallFormat::Glm45Xml;
  if (contains(source, kHermesCallOpen)) return ToolCallFormat::Hermes;
  // The DeepSeek markers without their full-width bars, so spelling variants in templates still match.
  if (contains(source, "tool▁calls▁begin") || contains(source, "tool▁call▁begin")) return ToolCallFormat::DeepSeekV3;
  if (contains(source, kMistralToolCalls)) return ToolCallFormat::Mistral;
  const bool llama_headers = contains(source, "<|start_header_id|>");
  if (contains(source, kLlama3PythonTag) || contains(source, "Environment: ipython") ||
      (llama_headers && contains(source, "\"parameters\""))) {
    return ToolCallFormat::Llama3Json;
  }
  return ToolCallFormat::None;
}

bool use_harmony_stop_tokens(const Tokenizer& tokenizer, std::vector<int32_t>& eos_token_ids) {
  auto special = [&](std::string_view token) -> std::optional<int32_t> {
    const std::optional<int32_t> id = tokenizer.token_id(token);
    return id && tokenizer.is_special(*id) ? id : std::nullopt;
  };
  const std::optional<int32_t> ret = special(kHarmonyReturn), call = special(kHarmonyCall), end = special(kHarmonyEnd);
  if (!special(kHarmonyChannel) || !ret || !call || !end) return false;
  for (int32_t id : {*ret, *call})
    if (std::find(eos_token_ids.begin(), eos_token_ids.end(), id) == eos_token_ids.end()) eos_token_ids.push_back(id);
  eos_token_ids.erase(std::remove(eos_token_ids.begin(), eos_token_ids.end(), *end), eos_token_ids.end());
  return true;
}

HarmonyHeader parse_harmony_header(std::string_view header) {
  HarmonyHeader parts;
  // A word runs to the next blank or special token.
  auto word = [&](std::string_view& text) {
    size_t end = 0;
    while (end < text.size() && !is_space(text[end]) && text.substr(end, 2) != "<|") ++end;
    std::string out(text.substr(0, end));
    text.remove_prefix(end);
    return out;
  };
  std::string_view rest = skip_blanks(header);
  if (!starts_with(rest, "<|") && !starts_with(rest, "to=")) parts.role = word(rest);
  for (;;) {
    rest = skip_blanks(rest);
    if (rest.empty()) break;
    if (starts_with(rest, kHarmonyChannel)) {
      rest.remove_prefix(kHarmonyChannel.size());
      parts.channel = word(rest);
    } else if (starts_with(rest, kHarmonyConstrain)) {
      rest.remove_prefix(kHarmonyConstrain.size());
      parts.content_type = word(rest);
    } else if (starts_with(rest, "to=")) {
      rest.remove_prefix(3);
      parts.recipient = word(rest);
    } else if (starts_with(rest, "<|")) {  // another special token: skipped
      const size_t close = rest.find("|>", 2);
      rest.remove_prefix(close == std::string_view::npos ? rest.size() : close + 2);
    } else {
      word(rest);  // stray text: skipped a word at a time
    }
  }
  return parts;
}

const char* to_string(ToolCallFormat format) {
  switch (format) {
    case ToolCallFormat::None:
      return "none";
    case ToolCallFormat::Hermes:
      return "hermes";
    case ToolCallFormat::DeepSeekV3:
      return "deepseek_v3";
    case ToolCallFormat::Llama3Json:
      return "llama3_json";
    case ToolCallFormat::Qwen3CoderXml:
      return "qwen3_coder_xml";
    case ToolCallFormat::Glm45Xml:
      return "glm45_xml";
    case ToolCallFormat::Mistral:
      return "mistral";
    case ToolCallFormat::Harmony:
      return "harmony";
  }
  return "unknown";
}

ToolCallMarkers tool_call_markers(ToolCallFormat format) {
  ToolCallMarkers markers;
  if (format == ToolCallFormat::Hermes || format == ToolCallFormat::Qwen3CoderXml ||
      format == ToolCallFormat::Glm45Xml) {
    markers.call_open = kHermesCallOpen;
    markers.call_close = "</tool_call>";
    if (format == ToolCallFormat::Glm45Xml)
      markers.body_tags = {std::string(kGlmKeyOpen), std::string(kGlmKeyClose), std::string(kGlmValueOpen),
                           std::string(kGlmValueClose)};
  } else if (format == ToolCallFormat::Mistral) {
    markers.section_open = kMistralToolCalls;
    markers.body_tags = {std::string(kMistralArgs), std::string(kMistralCallId)};
  } else if (format == ToolCallFormat::DeepSeekV3) {
    markers.section_open = kDeepSeekCallsBegin;
    markers.call_open = kDeepSeekCallBegin;
    markers.call_close = kDeepSeekCallEnd;
    markers.section_close = kDeepSeekCallsEnd;
    markers.separator = kDeepSeekSep;
  }
  return markers;
}

bool parse_tool_call_body(ToolCallFormat format, std::string_view body, std::string* name, std::string* arguments_json,
                          const ToolParameterTypes* types) {
  switch (format) {
    case ToolCallFormat::Hermes:
      return parse_json_call(body, /*require_arguments=*/false, name, arguments_json);
    case ToolCallFormat::Llama3Json:
      return parse_json_call(body, /*require_arguments=*/true, name, arguments_json);
    case ToolCallFormat::DeepSeekV3:
      return parse_deepseek_call(body, name, arguments_json);
    case ToolCallFormat::Qwen3CoderXml:
      return parse_qwen3_coder_call(body, types, name, arguments_json);
    case ToolCallFormat::Glm45Xml:
      return parse_glm45_call(body, types, name, arguments_json);
    case ToolCallFormat::Mistral:
      return parse_mistral_call(body, name, arguments_json);
    case ToolCallFormat::Harmony:
      return parse_harmony_call(body, name, arguments_json);
    case ToolCallFormat::None:
      return false;
  }
  return false;
}

bool is_mistral_call_id(std::string_view id) {
  if (id.size() != 9) return false;
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c))) return false;
  return true;
}

std::string mistral_call_id(std::string_view id) {
  if (is_mistral_call_id(id)) return std::string(id);
  // FNV-1a, then base 62: stable across runs and machines (std::hash is not promised to be).
  uint64_t h = 14695981039346656037ull;
  for (char c : id) h = (h ^ uint8_t(c)) * 1099511628211ull;
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string out(9, 'A');
  for (char& c : out) c = kAlphabet[h % 62], h /= 62;
  return out;
}

bool use_mistral_call_ids(nlohmann::ordered_json& messages) {
  bool changed = false;
  auto fix = [&](nlohmann::ordered_json& holder, const char* key) {
    auto it = holder.find(key);
    if (it == holder.end() || !it->is_string() || is_mistral_call_id(it->get_ref<const std::string&>())) return;
    *it = mistral_call_id(it->get_ref<const std::string&>());
    changed = true;
  };
  if (!messages.is_array()) return false;
  for (nlohmann::ordered_json& message : messages) {
    if (!message.is_object()) continue;
    fix(message, "tool_call_id");
    auto calls = message.find("tool_calls");
    if (calls == message.end() || !calls->is_array()) continue;
    for (nlohmann::ordered_json& call : *calls)
      if (call.is_object()) fix(call, "id");
  }
  return changed;
}

}  // namespace llmesh::text
