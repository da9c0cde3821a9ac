// The syntax a model family uses to call tools in its output, read from its
// chat template. The OutputParser parses it; the constrained decoder forces it.
//
// To add a family: a value here, its markers in tool_call_markers(), its body
// syntax in parse_tool_call_body(), a rule in detect_tool_call_format(), and
// (for a syntax without markers, like Llama3Json) a state in the OutputParser.
#pragma once

#include <string>
#include <string_view>

namespace llmesh::text {

enum class ToolCallFormat {
  None,        // the template knows no tools
  Hermes,      // <tool_call>{"name": …, "arguments": {…}}</tool_call>   (Qwen2.5, Qwen3, Hermes)
  DeepSeekV3,  // <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{…}\n```<｜tool▁call▁end｜>…
  Llama3Json,  // {"name": …, "parameters": {…}} as the whole message   (Llama 3.1/3.2/3.3)
};

// Guesses the format from the chat template's source text (None when it shows no tool-call syntax).
ToolCallFormat detect_tool_call_format(std::string_view chat_template_source);

// "none", "hermes", "deepseek_v3", "llama3_json" (for logs and tests).
const char* to_string(ToolCallFormat format);

// The literal markers around calls. Empty strings where the format has none.
//   Hermes:      call <tool_call> … </tool_call>, no section
//   DeepSeekV3:  section <｜tool▁calls▁begin｜> … <｜tool▁calls▁end｜>,
//                call <｜tool▁call▁begin｜> … <｜tool▁call▁end｜>, name/arguments split by <｜tool▁sep｜>
//   Llama3Json:  no markers (the optional <|python_tag|> prefix is kLlama3PythonTag); None: none
struct ToolCallMarkers {
  std::string section_open;
  std::string call_open;
  std::string call_close;
  std::string section_close;
  std::string separator;  // between name and arguments inside one call (DeepSeekV3 only)
};
ToolCallMarkers tool_call_markers(ToolCallFormat format);

inline constexpr std::string_view kLlama3PythonTag = "<|python_tag|>";

// Parses the text of one call (between call_open and call_close; for
// Llama3Json the JSON object) into a name and the arguments as JSON object
// text. False when it is not a well-formed call of that format:
//   Hermes:      {"name": string, "arguments": object|string}  ("parameters" accepted; no arguments means {})
//   DeepSeekV3:  TYPE<｜tool▁sep｜>NAME\n```json\n{…}\n```   (V3)  or  NAME<｜tool▁sep｜>{…}   (V3.1)
//   Llama3Json:  {"name": string, "parameters": object|string}  ("arguments" accepted; one of them required)
// Arguments given as a string must hold a JSON object; it is returned as written.
bool parse_tool_call_body(ToolCallFormat format, std::string_view body, std::string* name, std::string* arguments_json);

}  // namespace llmesh::text
