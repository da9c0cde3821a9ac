// Splits generated text, as it streams, into reasoning, visible content and
// tool calls, for the protocol adapters (OpenAI chat, later Anthropic and
// Responses).
//
// Formats understood:
//   reasoning   <think> … </think>           (Qwen3, DeepSeek-R1/V3.1)
//   tool calls  one ToolCallFormat per parser (text/tool_call_format.h):
//     Hermes      <tool_call>{"name": …, "arguments": {…}}</tool_call>, any number, anywhere in the content
//     DeepSeekV3  <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>…<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>
//                 (V3 and V3.1 call bodies); the section markers are dropped
//     Llama3Json  {"name": …, "parameters": {…}} when the message (after any
//                 reasoning) starts with "{" or <|python_tag|>; several objects
//                 may follow each other, separated by blanks or ";". Otherwise
//                 the message is plain content.
//     Qwen3CoderXml <tool_call><function=NAME><parameter=P>VALUE</parameter>…</function></tool_call>
//     Glm45Xml      <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>…</tool_call>
//                 any number, anywhere in the content, like Hermes; values are
//                 typed by `tool_parameter_types` (tool_call_format.h says how)
//     Mistral     [TOOL_CALLS] then a JSON array of calls (their "id" kept when it is
//                 9 alphanumerics), or [TOOL_CALLS]NAME[ARGS]{…} per call; the calls end
//                 where their JSON does (the format has no closing marker)
//     Harmony     gpt-oss's messages, a mode of its own (output_parser_harmony.cpp): generation
//                 starts at a header (the prompt ends with <|start|>assistant); each message is
//                 [<|start|>assistant][ to=R]<|channel|>C[ to=R][ <|constrain|>json]<|message|>BODY
//                 ended by <|end|>, <|return|>, <|call|>, the next <|start|> or the end of output:
//                   analysis                      -> reasoning
//                   final, commentary (no recipient, a preamble), any other channel -> content
//                   to=functions.NAME (with parse_tool_calls) -> a call to NAME, BODY its JSON
//                                                    arguments (kept to the end: <|call|> stops
//                                                    generation, so it seldom arrives)
//                   any other recipient, or functions without parse_tool_calls -> content, the
//                                                    header and <|message|> included
//                 Headers, <|start|> and the end tokens are dropped. The channels are parsed
//                 whatever parse_reasoning says (the model always writes them; <think> is not
//                 looked for). A header with no <|message|> in its first 256 bytes, or cut off
//                 by the end of output, is content as written (so is text that is no harmony).
//
// Guarantees:
//   - a tag is never emitted while it may still be incomplete: text that could
//     be the start of a tag is held back until the next push() or finish();
//   - a tool call that does not parse (see parse_tool_call_body) is returned
//     as plain content, markers included (never an error); so is a call cut
//     off by the end of the output;
//   - the result does not depend on how the text is split into push() calls;
//   - newlines right after <think>, right before </think> and right after
//     </think> are dropped (the templates put them there for layout);
//   - concatenating every delta's reasoning + content + the raw text of its
//     tool calls gives back the input minus the tags and those newlines
//     (and, for Llama3Json, the blanks and ";" around the JSON calls; for
//     Harmony, the headers, <|start|> and the end tokens).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text/tool_call_format.h"

namespace llmesh::text {

struct OutputParserOptions {
  bool parse_reasoning = true;      // recognise <think> … </think>
  bool starts_in_reasoning = false; // the prompt already opened <think> (generation begins inside it)
  bool parse_tool_calls = false;    // recognise tool calls in `tool_call_format`
  ToolCallFormat tool_call_format = ToolCallFormat::Hermes;  // None: no tool calls even with parse_tool_calls
  std::string reasoning_open = "<think>";
  std::string reasoning_close = "</think>";
  std::string tool_call_open = "<tool_call>";    // Hermes only
  std::string tool_call_close = "</tool_call>";  // Hermes only
  // Qwen3CoderXml / Glm45Xml: the JSON types of the request's tool parameters
  // (ToolParameterTypes::from_tools); values of unknown ones stay strings.
  ToolParameterTypes tool_parameter_types;
  // Harmony: the header of a message the prompt opened (the text between its <|start|> and
  // <|message|>, e.g. "assistant<|channel|>final"), whose body generation continues; empty:
  // generation starts at a header (after the generation prompt's <|start|>assistant).
  std::string harmony_open_header;
};

struct ParsedToolCall {
  std::string id;              // "call_" + 24 random alphanumerics (Mistral: 9 alphanumerics)
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
  bool in_reasoning() const {
    return state_ == State::Reasoning || (state_ == State::HarmonyBody && harmony_body_ == HarmonyBody::Reasoning);
  }

  // The literal markers this parser acts on (reasoning tags, tool-call
  // markers): a decoder must pass their text through even where they are
  // special tokens it would otherwise skip.
  std::vector<std::string> markers() const;

  // Parses a Hermes tool call body; false when it is not {"name": string, "arguments": object|string}.
  static bool parse_tool_call_body(std::string_view body, ParsedToolCall* call);

 private:
  enum class State {
    Content,    // plain text, watching for the markers
    Reasoning,  // inside <think> … </think>
    ToolCall,   // after a call_open marker, until its call_close
    JsonCalls,  // Llama3Json: a message of JSON calls
    MistralCalls,  // after [TOOL_CALLS]: an array of calls, or one NAME[ARGS]{…}
    HarmonyHeader,  // Harmony: a message's header, until <|message|>
    HarmonyBody,    // Harmony: a message's body, until its end token
  };
  // What a harmony message's body becomes.
  enum class HarmonyBody { Reasoning, Content, Call };

  void drain(OutputDelta& out, bool at_end);
  // Each returns true when the state changed and draining should go on.
  bool drain_content(OutputDelta& out, bool at_end);
  bool drain_reasoning(OutputDelta& out, bool at_end);
  bool drain_tool_call(OutputDelta& out, bool at_end);
  bool drain_json_calls(OutputDelta& out, bool at_end);
  bool drain_mistral_calls(OutputDelta& out, bool at_end);
  bool drain_harmony_header(OutputDelta& out, bool at_end);
  bool drain_harmony_body(OutputDelta& out, bool at_end);
  void end_harmony_call(OutputDelta& out, std::string_view body);
  void start_harmony_body(std::string_view header, OutputDelta& out);
  void emit(OutputDelta& out, std::string_view text);
  void end_tool_call(OutputDelta& out, std::string_view body);
  void add_tool_call(OutputDelta& out, std::string name, std::string arguments_json, std::string id = "");

  OutputParserOptions options_;
  ToolCallFormat format_ = ToolCallFormat::None;  // None when tool calls are not parsed
  ToolCallMarkers markers_;                       // of format_ (Hermes: the options' tags)
  State state_ = State::Content;
  std::string pending_;        // text not yet classified
  std::string held_newlines_;  // trailing newlines inside reasoning, dropped if </think> follows
  bool skip_leading_newlines_ = false;
  bool message_started_ = false;  // Llama3Json: the first visible content has been classified
  int num_json_calls_ = 0;        // Llama3Json: calls parsed in this message
  bool harmony_ = false;          // the Harmony mode (whatever parse_tool_calls says)
  HarmonyBody harmony_body_ = HarmonyBody::Content;  // HarmonyBody: what the body becomes
  std::string harmony_header_;    // HarmonyBody with Call: the header and <|message|>, for a body that is no call
};

// Harmony: the header of the message `prompt` ends inside (its body opened by <|message|> and
// not ended), for OutputParserOptions::harmony_open_header; none when the prompt ends between
// messages (after the generation prompt <|start|>assistant).
std::optional<std::string> harmony_open_header(std::string_view prompt);

// True when `prompt` ends inside an unclosed `open` … `close` block (e.g. a
// template that appends "<think>\n" to the generation prompt).
bool ends_inside_block(std::string_view prompt, std::string_view open, std::string_view close);

}  // namespace llmesh::text
