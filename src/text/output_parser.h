// Splits generated text, as it streams, into reasoning, visible content and
// tool calls, for the protocol adapters (OpenAI chat, later Anthropic and
// Responses).
//
// Formats understood:
//   reasoning   <think> … </think>           (Qwen3, DeepSeek-R1/V3.1)
//   tool calls  <tool_call>{"name": …, "arguments": {…}}</tool_call>   (Qwen2.5/Qwen3, Hermes)
//
// Guarantees:
//   - a tag is never emitted while it may still be incomplete: text that could
//     be the start of a tag is held back until the next push() or finish();
//   - a tool call whose body is not a JSON object with a string "name" is
//     returned as plain content, tags included (never an error);
//   - newlines right after <think>, right before </think> and right after
//     </think> are dropped (the templates put them there for layout);
//   - concatenating every delta's reasoning + content + the raw text of its
//     tool calls gives back the input minus the tags and those newlines.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace llmesh {

struct OutputParserOptions {
  bool parse_reasoning = true;      // recognise <think> … </think>
  bool starts_in_reasoning = false; // the prompt already opened <think> (generation begins inside it)
  bool parse_tool_calls = false;    // recognise <tool_call> … </tool_call>
  std::string reasoning_open = "<think>";
  std::string reasoning_close = "</think>";
  std::string tool_call_open = "<tool_call>";
  std::string tool_call_close = "</tool_call>";
};

struct ParsedToolCall {
  std::string id;              // "call_" + 24 random alphanumerics
  std::string name;
  std::string arguments_json;  // the arguments object serialized as JSON text
};

struct OutputDelta {
  std::string reasoning;
  std::string content;
  std::vector<ParsedToolCall> tool_calls;

  bool empty() const { return reasoning.empty() && content.empty() && tool_calls.empty(); }
  void append(OutputDelta&& other);
};

class OutputParser {
 public:
  explicit OutputParser(OutputParserOptions options = {});

  // Feeds the next piece of text; returns what is certain now.
  OutputDelta push(std::string_view text);
  // End of generation: everything held back (an unclosed tool call becomes content).
  OutputDelta finish();

  // True when the text so far ends inside a reasoning block.
  bool in_reasoning() const { return state_ == State::Reasoning; }

  // Parses a tool call body; false when it is not {"name": string, "arguments": object|string}.
  static bool parse_tool_call_body(std::string_view body, ParsedToolCall* call);

 private:
  enum class State { Content, Reasoning, ToolCall };

  void drain(OutputDelta& out, bool at_end);
  void emit(OutputDelta& out, std::string_view text);
  void end_tool_call(OutputDelta& out, std::string_view body);

  OutputParserOptions options_;
  State state_ = State::Content;
  std::string pending_;        // text not yet classified
  std::string held_newlines_;  // trailing newlines inside reasoning, dropped if </think> follows
  bool skip_leading_newlines_ = false;
};

// True when `prompt` ends inside an unclosed `open` … `close` block (e.g. a
// template that appends "<think>\n" to the generation prompt).
bool ends_inside_block(std::string_view prompt, std::string_view open, std::string_view close);

}  // namespace llmesh
