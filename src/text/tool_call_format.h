// The syntax a model family uses to call tools in its output, read from its
// chat template. The OutputParser parses it; the constrained decoder forces it.
//
// To add a family: a value here, its markers in tool_call_markers(), its body
// syntax in parse_tool_call_body(), a rule in detect_tool_call_format(), and
// (for a syntax without markers, like Llama3Json) a state in the OutputParser.
// The forced form of a call is in api/constrained_output.cpp.
//
// The two XML formats write each argument's value as raw text, so their
// parser types values by the request's tool schemas (ToolParameterTypes):
//   - a parameter whose schema allows a string stays text, except the text
//     `null` (or Python's `None`) where null is allowed too, which is null;
//   - otherwise (integer, number, boolean, object, array, null, or a list of
//     them) the value is parsed as JSON; where that fails, Python literals
//     (True, False, None, also inside objects and arrays, as the models write
//     them) are read as JSON's true, false and null. A value that does not
//     parse, or parses to a type its schema does not allow, stays a string;
//   - an unknown tool, an unknown parameter, or a schema that names no type
//     (`{}`, a $ref that does not resolve): a string, even when the text would
//     parse as JSON. The text is kept exactly as the model wrote it, rather
//     than guessing that `[1]` or `42` was meant as JSON where nothing says so.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

namespace llmesh::text {

enum class ToolCallFormat {
  None,        // the template knows no tools
  Hermes,      // <tool_call>{"name": …, "arguments": {…}}</tool_call>   (Qwen2.5, Qwen3, Hermes)
  DeepSeekV3,  // <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{…}\n```<｜tool▁call▁end｜>…
  Llama3Json,  // {"name": …, "parameters": {…}} as the whole message   (Llama 3.1/3.2/3.3)
  Qwen3CoderXml,  // <tool_call>\n<function=NAME>\n<parameter=P>\nVALUE\n</parameter>\n</function>\n</tool_call>
                  //   (Qwen3-Coder, Qwen3.5)
  Glm45Xml,       // <tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n</tool_call>
                  //   (GLM-4.5/4.6; GLM-4.7 without the newlines)
  Mistral,        // [TOOL_CALLS][{"name": …, "arguments": {…}, "id": "…"}, …]
                  //   (v3 tokenizers: Mistral 7B v0.3, Nemo, Small 3.1, Devstral Small 2505), or, per call,
                  //   [TOOL_CALLS]NAME[ARGS]{…}
                  //   (v11+: Mistral Small 3.2, Devstral 2507, Magistral); ids of 9 alphanumerics
  Harmony,        // OpenAI's harmony messages (gpt-oss): <|channel|>analysis<|message|>…<|end|> is reasoning,
                  //   <|channel|>final<|message|>…<|return|> the answer, and a call is a commentary message
                  //   to a function: <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>
};

// Guesses the format from the chat template's source text (None when it shows
// no tool-call syntax). The XML formats are checked before Hermes, whose
// <tool_call> their templates contain too:
//   Qwen3CoderXml  the template contains both "<function=" and "<parameter="
//   Glm45Xml       the template contains "<arg_key>"
//   Mistral        the template contains "[TOOL_CALLS]"
//   Harmony        the template contains both "<|channel|>" and "<|start|>assistant" (checked first)
ToolCallFormat detect_tool_call_format(std::string_view chat_template_source);

// "none", "hermes", "deepseek_v3", "llama3_json", "qwen3_coder_xml", "glm45_xml", "mistral", "harmony"
// (for logs and tests).
const char* to_string(ToolCallFormat format);

// The literal markers around calls. Empty strings where the format has none.
//   Hermes:      call <tool_call> … </tool_call>, no section
//   DeepSeekV3:  section <｜tool▁calls▁begin｜> … <｜tool▁calls▁end｜>,
//                call <｜tool▁call▁begin｜> … <｜tool▁call▁end｜>, name/arguments split by <｜tool▁sep｜>
//   Llama3Json:  no markers (the optional <|python_tag|> prefix is kLlama3PythonTag); None: none
//   Qwen3CoderXml, Glm45Xml: call <tool_call> … </tool_call> (as Hermes), plus the tags inside a call
//   Mistral:     section [TOOL_CALLS] (once before the array, or before each call), no closing marker;
//                [ARGS] and [CALL_ID] inside a call (v11+)
//   Harmony:     none here: its messages are framed by special tokens (kHarmony* below), which the
//                OutputParser handles as a mode of its own
struct ToolCallMarkers {
  std::string section_open;
  std::string call_open;
  std::string call_close;
  std::string section_close;
  std::string separator;  // between name and arguments inside one call (DeepSeekV3 only)
  // Tags inside a call body (the XML formats), which some tokenizers make
  // special tokens (GLM's <arg_key> …): a decoder must keep their text.
  std::vector<std::string> body_tags;
};
ToolCallMarkers tool_call_markers(ToolCallFormat format);

inline constexpr std::string_view kLlama3PythonTag = "<|python_tag|>";
inline constexpr std::string_view kMistralToolCalls = "[TOOL_CALLS]";
inline constexpr std::string_view kMistralArgs = "[ARGS]";
inline constexpr std::string_view kMistralCallId = "[CALL_ID]";

// Harmony's special tokens (o200k_harmony ids in the comments). A message is
//   <|start|>ROLE[ to=RECIPIENT]<|channel|>CHANNEL[ to=RECIPIENT][ <|constrain|>TYPE]<|message|>BODY END
// where END is <|end|>, or <|return|> (the last answer) / <|call|> (a tool call), the two that stop
// generation. The template's generation prompt is "<|start|>assistant", so output begins at the header.
inline constexpr std::string_view kHarmonyStart = "<|start|>";          // 200006
inline constexpr std::string_view kHarmonyEnd = "<|end|>";              // 200007
inline constexpr std::string_view kHarmonyMessage = "<|message|>";      // 200008
inline constexpr std::string_view kHarmonyChannel = "<|channel|>";      // 200005
inline constexpr std::string_view kHarmonyConstrain = "<|constrain|>";  // 200003
inline constexpr std::string_view kHarmonyReturn = "<|return|>";        // 200002
inline constexpr std::string_view kHarmonyCall = "<|call|>";            // 200012
// The recipient prefix of the functions a request declares (harmony's "functions" namespace).
inline constexpr std::string_view kHarmonyFunctions = "functions.";
// What the reasoning budget forces to end an analysis message and open the answer.
inline constexpr std::string_view kHarmonyEndOfAnalysis = "<|end|><|start|>assistant<|channel|>final<|message|>";

class Tokenizer;

// Harmony's stop tokens: generation ends at <|return|> (the answer is done) and <|call|> (a tool
// call waits for its result), never at <|end|>, which only ends a message (the analysis before
// the answer, a preamble). For a vocabulary with harmony's special tokens (o200k_harmony), adds
// the two to `eos_token_ids` and takes <|end|> out (GGUF's end-of-turn heuristics add it, a
// generation_config may list only <|return|>); true when it is such a vocabulary. Others: unchanged.
bool use_harmony_stop_tokens(const Tokenizer& tokenizer, std::vector<int32_t>& eos_token_ids);

// The parts of one harmony header (the text between <|start|> and <|message|>; a missing
// role, as right after the generation prompt, is empty). The recipient may come before or
// after the channel; blanks between the parts are layout.
struct HarmonyHeader {
  std::string role;          // "assistant", or "" when the header starts at <|channel|> or " to="
  std::string channel;       // "analysis", "commentary", "final", or "" when there is none
  std::string recipient;     // "functions.get_weather", or ""
  std::string content_type;  // after <|constrain|> ("json"), or ""
};
HarmonyHeader parse_harmony_header(std::string_view header);

// Mistral's templates refuse tool call ids that are not 9 alphanumerics.
bool is_mistral_call_id(std::string_view id);
// A 9-alphanumeric id for `id` (itself when it is one already): the same id always maps to the
// same one, so a conversation's rendered prompt, and its cached prefix, stay stable.
std::string mistral_call_id(std::string_view id);
// Gives every tool call id in OpenAI-chat-shaped template messages (assistant tool_calls[].id,
// tool messages' tool_call_id) its mistral_call_id; true when one changed. Agents send back ids
// of their own shape (call_…, toolu_…), which Mistral's templates would refuse.
bool use_mistral_call_ids(nlohmann::ordered_json& messages);

// The JSON types a parameter's schema allows, one bit each; 0: the schema
// names none (any value), which the XML parsers type as a string.
using JsonTypes = uint8_t;
inline constexpr JsonTypes kJsonString = 1, kJsonInteger = 2, kJsonNumber = 4, kJsonBoolean = 8, kJsonObject = 16,
                           kJsonArray = 32, kJsonNull = 64;

// The JSON types `schema` allows: `type` (a name or a list), `nullable`,
// `enum` / `const` (their values' types), anyOf / oneOf (the union), allOf
// (the intersection), and $ref to #/$defs/… or #/definitions/… of `root`.
// `number` includes integers.
JsonTypes json_types_of_schema(const nlohmann::ordered_json& schema, const nlohmann::ordered_json& root);

// What the XML parsers need of a request's tools: per tool, per parameter,
// the JSON types its schema allows. Small (names and one byte each).
struct ToolParameterTypes {
  std::unordered_map<std::string, std::unordered_map<std::string, JsonTypes>> tools;

  // 0 for an unknown tool or parameter.
  JsonTypes lookup(const std::string& tool, const std::string& parameter) const;
  bool empty() const { return tools.empty(); }

  // From a tools array in any of the APIs' shapes: OpenAI chat
  // {type: "function", function: {name, parameters}}, flat {name, parameters}
  // (Responses) and {name, input_schema} (Anthropic). Entries without a name
  // or an object schema with `properties` add nothing.
  static ToolParameterTypes from_tools(const nlohmann::ordered_json& tools);
};

// The JSON value of one raw XML argument value, typed by `types` as the
// header comment says (0: a string).
nlohmann::ordered_json typed_argument_value(std::string_view raw, JsonTypes types);

// Parses the text of one call (between call_open and call_close; for
// Llama3Json the JSON object) into a name and the arguments as JSON object
// text. False when it is not a well-formed call of that format:
//   Hermes:      {"name": string, "arguments": object|string}  ("parameters" accepted; no arguments means {})
//   DeepSeekV3:  TYPE<｜tool▁sep｜>NAME\n```json\n{…}\n```   (V3)  or  NAME<｜tool▁sep｜>{…}   (V3.1)
//   Llama3Json:  {"name": string, "parameters": object|string}  ("arguments" accepted; one of them required)
//   Qwen3CoderXml: <function=NAME> (<parameter=KEY>VALUE</parameter>)* </function>, blanks between the
//                tags; one newline right after <parameter=KEY> and one right before </parameter> are
//                layout, not value; a missing </function> at the end is accepted
//   Glm45Xml:    NAME (<arg_key>KEY</arg_key> <arg_value>VALUE</arg_value>)*, blanks between the tags;
//                the value is everything between its tags
//   Mistral:     one element of the array, {"name": string, "arguments": object|string, "id": …}, or
//                NAME[ARGS]{…} / NAME[CALL_ID]ID[ARGS]{…}
//   Harmony:     one message from its header to its end token (neither included), addressed to
//                functions.NAME: [assistant][ to=functions.NAME]<|channel|>commentary[ to=functions.NAME]
//                [ <|constrain|>json]<|message|>{…}
// Arguments given as a string must hold a JSON object; it is returned as written.
// The XML formats type each value by `types` (null: every value a string);
// their arguments come out in the order written (a repeated key: the last value).
bool parse_tool_call_body(ToolCallFormat format, std::string_view body, std::string* name, std::string* arguments_json,
                          const ToolParameterTypes* types = nullptr);

}  // namespace llmesh::text
