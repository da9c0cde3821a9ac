// libFuzzer target: the streaming output parser (reasoning <think> blocks and
// the tool-call formats) on arbitrary generated text in arbitrary chunk splits.
// Input: byte 0 picks the options (bit 0 parse_reasoning, bit 1
// starts_in_reasoning, bits 2-3 the tool-call format: none, Hermes,
// DeepSeekV3, Llama3Json; with bit 5 set, bit 2 picks Qwen3CoderXml or
// Glm45Xml, whose values are typed by a fixed table; bit 6 set: Harmony, bit 2 then
// switching its tool calls off), byte 1 seeds the chunk sizes (1..16 bytes), the
// rest is the text. Checks the header's promise that the result does not
// depend on the split: the text pushed whole and pushed in chunks must give
// the same reasoning, content and tool calls. Also runs the one-shot helpers
// (parse_tool_call_body of every format, detect_tool_call_format,
// ends_inside_block) on the text.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "text/output_parser.h"
#include "text/tool_call_format.h"

namespace {

using namespace llmesh::text;

struct Result {
  std::string reasoning, content, calls;  // calls: name '\x1f' arguments '\x1e', ids left out (random)
};

void add(Result& r, const OutputDelta& d) {
  r.reasoning += d.reasoning;
  r.content += d.content;
  for (const ParsedToolCall& call : d.tool_calls) r.calls += call.name + '\x1f' + call.arguments_json + '\x1e';
}

Result run(const OutputParserOptions& options, std::string_view text, uint32_t seed) {
  OutputParser parser(options);
  (void)parser.markers();
  Result r;
  if (seed == 0) {
    add(r, parser.push(text));
  } else {
    uint32_t x = seed;
    for (size_t pos = 0; pos < text.size();) {
      x = x * 1103515245u + 12345u;
      const size_t n = std::min(text.size() - pos, size_t(1 + (x >> 16) % 16));
      add(r, parser.push(text.substr(pos, n)));
      (void)parser.in_reasoning();
      pos += n;
    }
  }
  add(r, parser.finish());
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 2, size - 2);
  static const ToolCallFormat kFormats[] = {ToolCallFormat::None,       ToolCallFormat::Hermes,
                                            ToolCallFormat::DeepSeekV3, ToolCallFormat::Llama3Json,
                                            ToolCallFormat::Qwen3CoderXml, ToolCallFormat::Glm45Xml,
                                            ToolCallFormat::Harmony};
  // Parameters of every type for the XML formats' typing (tools "f" and "g").
  static const ToolParameterTypes kTypes = ToolParameterTypes::from_tools(nlohmann::ordered_json::parse(
      R"([{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
            "s": {"type": "string"}, "i": {"type": "integer"}, "n": {"type": "number"}, "b": {"type": "boolean"},
            "o": {"type": "object"}, "a": {"type": "array"}, "z": {"type": "null"}, "sn": {"type": ["string", "null"]}}}}},
          {"name": "g", "input_schema": {"type": "object", "properties": {"x": {"anyOf": [{"type": "integer"},
            {"type": "boolean"}]}}}}])"));
  OutputParserOptions options;
  options.parse_reasoning = data[0] & 1;
  options.starts_in_reasoning = (data[0] & 2) && options.parse_reasoning;
  // Bits 2-3 pick the format as they always did; bit 5 switches to the XML formats.
  options.tool_call_format = (data[0] & 0x20) ? kFormats[4 + ((data[0] >> 2) & 1)] : kFormats[(data[0] >> 2) & 3];
  options.parse_tool_calls = options.tool_call_format != ToolCallFormat::None;
  if (data[0] & 0x40) {
    options.tool_call_format = ToolCallFormat::Harmony;
    options.parse_tool_calls = !(data[0] & 4);
  }
  options.tool_parameter_types = kTypes;

  const Result whole = run(options, text, 0);
  const Result chunked = run(options, text, uint32_t(data[1]) + 1);
  if (whole.reasoning != chunked.reasoning || whole.content != chunked.content || whole.calls != chunked.calls) {
    std::fprintf(stderr, "output depends on the chunk split:\n reasoning %zu vs %zu\n content %zu vs %zu\n calls %zu vs %zu\n",
                 whole.reasoning.size(), chunked.reasoning.size(), whole.content.size(), chunked.content.size(),
                 whole.calls.size(), chunked.calls.size());
    std::abort();
  }

  for (ToolCallFormat format : kFormats) {
    std::string name, arguments;
    (void)parse_tool_call_body(format, text, &name, &arguments, &kTypes);
  }
  ParsedToolCall call;
  (void)OutputParser::parse_tool_call_body(text, &call);
  (void)detect_tool_call_format(text);
  (void)ends_inside_block(text, "<think>", "</think>");
  return 0;
}
