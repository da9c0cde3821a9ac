#include "text/tool_call_format.h"

#include <nlohmann/json.hpp>

namespace llmesh::text {

namespace {

constexpr std::string_view kHermesCallOpen = "<tool_call>";
constexpr std::string_view kDeepSeekCallsBegin = "<｜tool▁calls▁begin｜>";
constexpr std::string_view kDeepSeekCallsEnd = "<｜tool▁calls▁end｜>";
constexpr std::string_view kDeepSeekCallBegin = "<｜tool▁call▁begin｜>";
constexpr std::string_view kDeepSeekCallEnd = "<｜tool▁call▁end｜>";
constexpr std::string_view kDeepSeekSep = "<｜tool▁sep｜>";

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

}  // namespace

ToolCallFormat detect_tool_call_format(std::string_view source) {
  if (contains(source, kHermesCallOpen)) return ToolCallFormat::Hermes;
  // The DeepSeek markers without their full-width bars, so spelling variants in templates still match.
  if (contains(source, "tool▁calls▁begin") || contains(source, "tool▁call▁begin")) return ToolCallFormat::DeepSeekV3;
  const bool llama_headers = contains(source, "<|start_header_id|>");
  if (contains(source, kLlama3PythonTag) || contains(source, "Environment: ipython") ||
      (llama_headers && contains(source, "\"parameters\""))) {
    return ToolCallFormat::Llama3Json;
  }
  return ToolCallFormat::None;
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
  }
  return "unknown";
}

ToolCallMarkers tool_call_markers(ToolCallFormat format) {
  ToolCallMarkers markers;
  if (format == ToolCallFormat::Hermes) {
    markers.call_open = kHermesCallOpen;
    markers.call_close = "</tool_call>";
  } else if (format == ToolCallFormat::DeepSeekV3) {
    markers.section_open = kDeepSeekCallsBegin;
    markers.call_open = kDeepSeekCallBegin;
    markers.call_close = kDeepSeekCallEnd;
    markers.section_close = kDeepSeekCallsEnd;
    markers.separator = kDeepSeekSep;
  }
  return markers;
}

bool parse_tool_call_body(ToolCallFormat format, std::string_view body, std::string* name,
                          std::string* arguments_json) {
  switch (format) {
    case ToolCallFormat::Hermes:
      return parse_json_call(body, /*require_arguments=*/false, name, arguments_json);
    case ToolCallFormat::Llama3Json:
      return parse_json_call(body, /*require_arguments=*/true, name, arguments_json);
    case ToolCallFormat::DeepSeekV3:
      return parse_deepseek_call(body, name, arguments_json);
    case ToolCallFormat::None:
      return false;
  }
  return false;
}

}  // namespace llmesh::text
