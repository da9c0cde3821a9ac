// The two XML tool-call formats: Qwen3-Coder's (<function=NAME><parameter=P>…)
// and GLM-4.5's (NAME<arg_key>K</arg_key><arg_value>V</arg_value>), both inside
// <tool_call> … </tool_call>. Detection from template sources, the typing of
// raw values by the tools' schemas, call bodies, the streaming parser (real
// layouts, several calls, text around them, malformed calls as content, random
// splits), and a round trip through small templates in each family's syntax.
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "text/chat_template.h"
#include "text/output_parser.h"
#include "text/tool_call_format.h"

#include "output_split.h"

namespace llmesh {

using nlohmann::json;
using nlohmann::ordered_json;
using text::ChatTemplate;
using text::ChatTemplateOptions;
using text::detect_tool_call_format;
using text::JsonTypes;
using text::OutputDelta;
using text::OutputParser;
using text::OutputParserOptions;
using text::parse_tool_call_body;
using text::ToolCallFormat;
using text::ToolParameterTypes;
using text::typed_argument_value;

namespace {

using test::random_split;

// The tools of the examples below, in OpenAI chat's shape.
const ordered_json& example_tools() {
  static const ordered_json tools = ordered_json::parse(R"([
    {"type": "function", "function": {"name": "write_file", "parameters": {"type": "object",
      "properties": {"path": {"type": "string"}, "content": {"type": "string"}, "mode": {"type": "integer"},
                     "append": {"type": "boolean"}},
      "required": ["path", "content"]}}},
    {"type": "function", "function": {"name": "search", "parameters": {"type": "object",
      "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}, "ratio": {"type": "number"},
                     "filters": {"type": "object"}, "tags": {"type": "array", "items": {"type": "string"}},
                     "cursor": {"type": ["string", "null"]}, "exact": {"type": ["boolean", "null"]},
                     "kind": {"$ref": "#/$defs/kind"}},
      "$defs": {"kind": {"enum": [1, 2, 3]}},
      "required": ["query"]}}}
  ])");
  return tools;
}

OutputParserOptions xml_options(ToolCallFormat format) {
  OutputParserOptions options;
  options.parse_tool_calls = true;
  options.tool_call_format = format;
  options.tool_parameter_types = ToolParameterTypes::from_tools(example_tools());
  return options;
}

OutputDelta feed(const OutputParserOptions& options, const std::vector<std::string>& pieces,
                 std::vector<OutputDelta>* steps = nullptr) {
  OutputParser parser(options);
  OutputDelta all;
  for (const std::string& piece : pieces) {
    OutputDelta d = parser.push(piece);
    if (steps) steps->push_back(d);
    all.append(std::move(d));
  }
  all.append(parser.finish());
  return all;
}

OutputDelta feed_bytes(const OutputParserOptions& options, const std::string& text,
                       std::vector<OutputDelta>* steps = nullptr) {
  std::vector<std::string> pieces;
  for (char c : text) pieces.emplace_back(1, c);
  return feed(options, pieces, steps);
}

ordered_json args_of(const text::ParsedToolCall& call) { return ordered_json::parse(call.arguments_json); }

// ---- detection ------------------------------------------------------------------

// Excerpts in the shape of the real templates (their tool-call parts).
const char* kQwen3CoderExcerpt =
    "{{- '\\n<tool_call>\\n<function=' + tool_call.name + '>\\n' }}\n"
    "{%- for args_name, args_value in tool_call.arguments|items %}\n"
    "{{- '<parameter=' + args_name + '>\\n' }}{{- args_value }}{{- '\\n</parameter>\\n' }}\n"
    "{%- endfor %}\n{{- '</function>\\n</tool_call>' }}";
const char* kGlm45Excerpt =
    "{{ '\\n<tool_call>' + tc.name }}\n{% for k, v in _args.items() %}\n<arg_key>{{ k }}</arg_key>\n"
    "<arg_value>{{ v | tojson if v is not string else v }}</arg_value>\n{% endfor %}\n</tool_call>";
const char* kGlm47Excerpt =
    "{{- '<tool_call>' + tc.name -}}{% for k, v in _args.items() %}<arg_key>{{ k }}</arg_key><arg_value>"
    "{{ v | tojson(ensure_ascii=False) if v is not string else v }}</arg_value>{% endfor %}</tool_call>";

TEST(XmlToolCallFormat, DetectsFromTemplateSource) {
  EXPECT_EQ(detect_tool_call_format(kQwen3CoderExcerpt), ToolCallFormat::Qwen3CoderXml);
  EXPECT_EQ(detect_tool_call_format(kGlm45Excerpt), ToolCallFormat::Glm45Xml);
  EXPECT_EQ(detect_tool_call_format(kGlm47Excerpt), ToolCallFormat::Glm45Xml);
  // Qwen3's Hermes template stays Hermes; "<function=" alone (without parameters) is not Qwen3-Coder's syntax.
  EXPECT_EQ(detect_tool_call_format("{{- '<tool_call>\\n{\"name\": \"' }}"), ToolCallFormat::Hermes);
  EXPECT_EQ(detect_tool_call_format("<tool_call> <function=x>"), ToolCallFormat::Hermes);
  EXPECT_STREQ(to_string(ToolCallFormat::Qwen3CoderXml), "qwen3_coder_xml");
  EXPECT_STREQ(to_string(ToolCallFormat::Glm45Xml), "glm45_xml");
}

TEST(XmlToolCallFormat, MarkersIncludeGlmBodyTags) {
  const std::vector<std::string> glm = OutputParser(xml_options(ToolCallFormat::Glm45Xml)).markers();
  for (const char* tag : {"<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"})
    EXPECT_NE(std::find(glm.begin(), glm.end(), tag), glm.end()) << tag;
  const std::vector<std::string> qwen = OutputParser(xml_options(ToolCallFormat::Qwen3CoderXml)).markers();
  EXPECT_NE(std::find(qwen.begin(), qwen.end(), "<tool_call>"), qwen.end());
}

// ---- typing ---------------------------------------------------------------------

TEST(XmlToolCallFormat, SchemaTypes) {
  const ToolParameterTypes types = ToolParameterTypes::from_tools(example_tools());
  EXPECT_EQ(types.lookup("write_file", "path"), text::kJsonString);
  EXPECT_EQ(types.lookup("write_file", "mode"), text::kJsonInteger);
  EXPECT_EQ(types.lookup("search", "cursor"), text::kJsonString | text::kJsonNull);
  EXPECT_EQ(types.lookup("search", "kind"), text::kJsonInteger);  // through $ref, from the enum's values
  EXPECT_EQ(types.lookup("search", "nope"), 0);
  EXPECT_EQ(types.lookup("nope", "query"), 0);
  const ordered_json root = ordered_json::object();
  auto of = [&](const char* schema) { return text::json_types_of_schema(ordered_json::parse(schema), root); };
  EXPECT_EQ(of(R"({"anyOf": [{"type": "integer"}, {"type": "array"}]})"), text::kJsonInteger | text::kJsonArray);
  EXPECT_EQ(of(R"({"anyOf": [{"type": "integer"}, {}]})"), 0);  // one option takes anything
  EXPECT_EQ(of(R"({"allOf": [{"type": ["integer", "string"]}, {"type": "integer"}]})"), text::kJsonInteger);
  EXPECT_EQ(of(R"({"type": "number", "nullable": true})"), text::kJsonNumber | text::kJsonNull);
  EXPECT_EQ(of(R"({"const": true})"), text::kJsonBoolean);
  EXPECT_EQ(of(R"({"description": "anything"})"), 0);
  EXPECT_EQ(of(R"({"$ref": "#/$defs/missing"})"), 0);

  // Anthropic's input_schema and Responses' flat tools give the same table.
  const ordered_json anthropic = ordered_json::parse(
      R"([{"name": "w", "input_schema": {"type": "object", "properties": {"n": {"type": "integer"}}}}])");
  EXPECT_EQ(ToolParameterTypes::from_tools(anthropic).lookup("w", "n"), text::kJsonInteger);
  const ordered_json responses = ordered_json::parse(
      R"([{"type": "function", "name": "w", "parameters": {"type": "object", "properties": {"b": {"type": "boolean"}}}}])");
  EXPECT_EQ(ToolParameterTypes::from_tools(responses).lookup("w", "b"), text::kJsonBoolean);
}

TEST(XmlToolCallFormat, TypesValuesBySchema) {
  using text::kJsonArray, text::kJsonBoolean, text::kJsonInteger, text::kJsonNull, text::kJsonNumber,
      text::kJsonObject, text::kJsonString;
  // Strings stay text, exactly (even when they look like JSON).
  EXPECT_EQ(typed_argument_value(" 42 ", kJsonString), " 42 ");
  EXPECT_EQ(typed_argument_value("[1]", kJsonString), "[1]");
  EXPECT_EQ(typed_argument_value("null", kJsonString), "null");
  EXPECT_EQ(typed_argument_value("null", kJsonString | kJsonNull), ordered_json(nullptr));
  EXPECT_EQ(typed_argument_value("None", kJsonString | kJsonNull), ordered_json(nullptr));
  // JSON for the other types; blanks around the value do not matter.
  EXPECT_EQ(typed_argument_value(" 42\n", kJsonInteger), 42);
  EXPECT_EQ(typed_argument_value("2.5", kJsonNumber), 2.5);
  EXPECT_EQ(typed_argument_value("7", kJsonNumber), 7);  // integers are numbers
  EXPECT_EQ(typed_argument_value("true", kJsonBoolean), true);
  EXPECT_EQ(typed_argument_value(R"({"a": [1, null]})", kJsonObject), ordered_json::parse(R"({"a": [1, null]})"));
  EXPECT_EQ(typed_argument_value("[\"x\"]", kJsonArray), ordered_json::array({"x"}));
  EXPECT_EQ(typed_argument_value("null", kJsonNull | kJsonInteger), ordered_json(nullptr));
  // Python literals, as the models write them (Qwen3-Coder's template prints values with `| string`).
  EXPECT_EQ(typed_argument_value("True", kJsonBoolean), true);
  EXPECT_EQ(typed_argument_value("False", kJsonBoolean | kJsonNull), false);
  EXPECT_EQ(typed_argument_value("None", kJsonInteger | kJsonNull), ordered_json(nullptr));
  EXPECT_EQ(typed_argument_value(R"({"ok": True, "s": "True", "n": None})", kJsonObject),
            ordered_json::parse(R"({"ok": true, "s": "True", "n": null})"));
  // Not of its type: the text as a string.
  EXPECT_EQ(typed_argument_value("2.5", kJsonInteger), "2.5");
  EXPECT_EQ(typed_argument_value("yes", kJsonBoolean), "yes");
  EXPECT_EQ(typed_argument_value("[1, 2", kJsonArray), "[1, 2");
  EXPECT_EQ(typed_argument_value("{}", kJsonArray), "{}");
  // No type known: a string.
  EXPECT_EQ(typed_argument_value("42", 0), "42");
}

// ---- call bodies ----------------------------------------------------------------

TEST(XmlToolCallFormat, ParsesQwen3CoderBodies) {
  const ToolParameterTypes types = ToolParameterTypes::from_tools(example_tools());
  std::string name, arguments;
  // The template's layout, with a multi-line string whose own blank lines are kept.
  ASSERT_TRUE(parse_tool_call_body(ToolCallFormat::Qwen3CoderXml,
                                   "\n<function=write_file>\n<parameter=path>\nsrc/a.py\n</parameter>\n"
                                   "<parameter=content>\ndef f():\n    return 1\n\n\n</parameter>\n"
                                   "<parameter=mode>\n644\n</parameter>\n<parameter=append>\nFalse\n</parameter>\n"
                                   "</function>\n",
                                   &name, &arguments, &types));
  EXPECT_EQ(name, "write_file");
  EXPECT_EQ(arguments, R"({"path":"src/a.py","content":"def f():\n    return 1\n\n","mode":644,"append":false})");
  // Without the layout newlines (Qwen3.5 writes <parameter=P>VALUE</parameter>), JSON values, an unknown parameter.
  ASSERT_TRUE(parse_tool_call_body(ToolCallFormat::Qwen3CoderXml,
                                   "<function=search><parameter=query>a <b> c</parameter>"
                                   "<parameter=filters>{\"lang\": \"py\"}</parameter><parameter=tags>[\"x\", \"y\"]"
                                   "</parameter><parameter=other>[1]</parameter><parameter=cursor>null</parameter>"
                                   "</function>",
                                   &name, &arguments, &types));
  EXPECT_EQ(name, "search");
  EXPECT_EQ(arguments, R"({"query":"a <b> c","filters":{"lang":"py"},"tags":["x","y"],"other":"[1]","cursor":null})");
  // No parameters; a missing </function> at the end; an unknown tool (all strings); no types at all.
  ASSERT_TRUE(parse_tool_call_body(ToolCallFormat::Qwen3CoderXml, "<function=now>\n</function>", &name, &arguments));
  EXPECT_EQ(arguments, "{}");
  ASSERT_TRUE(parse_tool_call_body(ToolCallFormat::Qwen3CoderXml, "<function=other>\n<parameter=n>\n5\n</parameter>\n",
                                   &name, &arguments, &types));
  EXPECT_EQ(arguments, R"({"n":"5"})");
  // Malformed.
  for (const char* bad : {
           "",                                                     // nothing
           "{\"name\": \"f\", \"arguments\": {}}",                 // Hermes JSON
           "<function=>\n</function>",                             // no name
           "<function=a b>\n</function>",                          // not a name
           "<function=f>\n<parameter=x>\n1\n",                     // parameter not closed
           "<function=f>\n<parameter=>\n1\n</parameter>",          // no key
           "<function=f>\ntext\n</function>",                      // text between the tags
           "<function=f>\n</function>\ntrailing",                  // text after the function
           "prefix <function=f>\n</function>",                     // text before it
       }) {
    EXPECT_FALSE(parse_tool_call_body(ToolCallFormat::Qwen3CoderXml, bad, &name, &arguments, &types)) << bad;
  }
}

TEST(XmlToolCallFormat, ParsesGlm45Bodies) {
  const ToolParameterTypes types = ToolParameterTypes::from_tools(example_tools());
  std::string name, arguments;
  // GLM-4.5/4.6 layout: newlines between the tags; the value is all the text between its tags.
  ASSERT_TRUE(parse_tool_call_body(ToolCallFormat::Glm45Xml,
                                   "write_file\n<arg_key>path</arg_key>\n<arg_value>a.txt</arg_value>\n"
                                   "<arg_key>content</arg_key>\n<arg_value>\nline 1\nline 2\n</arg_value>\n"
                                   "<arg_key>mode</arg_key>\n<arg_value>420</arg_value>\n",
                                   &name, &arguments, &types));
  EXPECT_EQ(name, "write_file");
  EXPECT_EQ(arguments, R"({"path":"a.txt","content":"\nline 1\nline 2\n","mode":420})");
  // GLM-4.7 layout: no newlines.
  ASSERT_TRUE(parse_tool_call_body(ToolCallFormat::Glm45Xml,
                                   "search<arg_key>query</arg_key><arg_value>x</arg_value><arg_key>limit</arg_key>"
                                   "<arg_value>3</arg_value><arg_key>exact</arg_key><arg_value>true</arg_value>"
                                   "<arg_key>ratio</arg_key><arg_value>0.5</arg_value>",
                                   &name, &arguments, &types));
  EXPECT_EQ(arguments, R"({"query":"x","limit":3,"exact":true,"ratio":0.5})");
  ASSERT_TRUE(parse_tool_call_body(ToolCallFormat::Glm45Xml, "now\n", &name, &arguments, &types));
  EXPECT_EQ(name, "now");
  EXPECT_EQ(arguments, "{}");
  for (const char* bad : {
           "",                                                            // no name
           "two words\n<arg_key>a</arg_key><arg_value>1</arg_value>",     // not a name
           "{\"name\": \"f\"}",                                           // Hermes JSON
           "f\n<arg_key>a</arg_key>\n",                                   // key without value
           "f\n<arg_key>a</arg_key>\n<arg_value>1",                       // value not closed
           "f\n<arg_key>a</arg_key>text<arg_value>1</arg_value>",         // text between the tags
           "f\n<arg_value>1</arg_value>",                                 // value without key
           "f\n<arg_key>a</arg_key><arg_value>1</arg_value> trailing",    // text after the arguments
       }) {
    EXPECT_FALSE(parse_tool_call_body(ToolCallFormat::Glm45Xml, bad, &name, &arguments, &types)) << bad;
  }
}

// ---- the streaming parser ---------------------------------------------------------

std::string qwen_call(const std::string& name, const std::vector<std::pair<std::string, std::string>>& params) {
  std::string out = "<tool_call>\n<function=" + name + ">\n";
  for (const auto& [key, value] : params) out += "<parameter=" + key + ">\n" + value + "\n</parameter>\n";
  return out + "</function>\n</tool_call>";
}

std::string glm_call(const std::string& name, const std::vector<std::pair<std::string, std::string>>& params) {
  std::string out = "<tool_call>" + name + "\n";
  for (const auto& [key, value] : params)
    out += "<arg_key>" + key + "</arg_key>\n<arg_value>" + value + "</arg_value>\n";
  return out + "</tool_call>";
}

TEST(XmlToolCallParser, Qwen3CoderCallsAroundText) {
  const std::string text = "I'll write it.\n" +
                           qwen_call("write_file", {{"path", "a.py"}, {"content", "x = 1\n\ny = '<b>'"}}) + "\n" +
                           qwen_call("search", {{"query", "a"}, {"limit", "10"}, {"tags", "[\"t\"]"}}) + "\nDone.";
  std::vector<OutputDelta> steps;
  const OutputDelta d = feed_bytes(xml_options(ToolCallFormat::Qwen3CoderXml), text, &steps);
  EXPECT_EQ(d.content, "I'll write it.\nDone.");
  ASSERT_EQ(d.tool_calls.size(), 2u);
  EXPECT_EQ(d.tool_calls[0].name, "write_file");
  EXPECT_EQ(args_of(d.tool_calls[0]), ordered_json::parse(R"({"path": "a.py", "content": "x = 1\n\ny = '<b>'"})"));
  EXPECT_EQ(d.tool_calls[1].name, "search");
  EXPECT_EQ(args_of(d.tool_calls[1]), ordered_json::parse(R"({"query": "a", "limit": 10, "tags": ["t"]})"));
  // No part of a tag ever reaches the content.
  for (const OutputDelta& step : steps) EXPECT_EQ(step.content.find('<'), std::string::npos) << step.content;
}

TEST(XmlToolCallParser, Glm45CallsAfterReasoning) {
  const std::string text = "<think>\nNeed the file.\n</think>\n" + glm_call("write_file", {{"path", "b"}}) +
                           glm_call("search", {{"query", "q q"}, {"exact", "false"}, {"filters", "{\"a\":1}"}});
  OutputParserOptions options = xml_options(ToolCallFormat::Glm45Xml);
  const OutputDelta d = feed_bytes(options, text);
  EXPECT_EQ(d.reasoning, "Need the file.");
  EXPECT_EQ(d.content, "");
  ASSERT_EQ(d.tool_calls.size(), 2u);
  EXPECT_EQ(args_of(d.tool_calls[0]), ordered_json::parse(R"({"path": "b"})"));
  EXPECT_EQ(args_of(d.tool_calls[1]), ordered_json::parse(R"({"query": "q q", "exact": false, "filters": {"a": 1}})"));
}

TEST(XmlToolCallParser, MalformedAndCutOffCallsAreContent) {
  const std::string broken_qwen = "<tool_call>\n<function=f>\n<parameter=x>\n1\n</function>\n</tool_call>";
  OutputDelta d = feed_bytes(xml_options(ToolCallFormat::Qwen3CoderXml), "a " + broken_qwen + " b");
  EXPECT_TRUE(d.tool_calls.empty());
  EXPECT_EQ(d.content, "a " + broken_qwen + " b");
  // A Hermes JSON call is not a Qwen3-Coder call.
  const std::string hermes = "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>";
  d = feed_bytes(xml_options(ToolCallFormat::Qwen3CoderXml), hermes);
  EXPECT_TRUE(d.tool_calls.empty());
  EXPECT_EQ(d.content, hermes);
  // Cut off by the end of the output.
  const std::string cut = "<tool_call>\n<function=search>\n<parameter=query>\nabc";
  d = feed_bytes(xml_options(ToolCallFormat::Qwen3CoderXml), "x " + cut);
  EXPECT_TRUE(d.tool_calls.empty());
  EXPECT_EQ(d.content, "x " + cut);
  const std::string broken_glm = "<tool_call>f\n<arg_key>a</arg_key>\n</tool_call>";
  d = feed_bytes(xml_options(ToolCallFormat::Glm45Xml), broken_glm + glm_call("g", {}));
  EXPECT_EQ(d.content, broken_glm);
  ASSERT_EQ(d.tool_calls.size(), 1u);
  EXPECT_EQ(d.tool_calls[0].name, "g");
}

TEST(XmlToolCallParser, RandomSplitsMatchOnePush) {
  struct Case {
    ToolCallFormat format;
    bool starts_in_reasoning;
    std::string text;
    size_t num_calls;
  };
  const std::vector<Case> cases = {
      {ToolCallFormat::Qwen3CoderXml, false,
       "<think>\nplan\n</think>\n\nText " + qwen_call("write_file", {{"path", "é/ü"}, {"content", "<a>\n</b>"}}) +
           "\n" + qwen_call("search", {{"query", "q"}, {"ratio", "0.5"}, {"exact", "True"}}),
       2},
      {ToolCallFormat::Qwen3CoderXml, true,
       "still thinking</think>\n" + qwen_call("now", {}) + " tail <tool_ca", 1},
      {ToolCallFormat::Qwen3CoderXml, false,
       "<tool_call>\n<function=f>\n<parameter=x>\n</tool_call> <tool_call>\n<function=g>\n<parameter=", 0},
      {ToolCallFormat::Glm45Xml, false,
       "Checking…\n" + glm_call("search", {{"query", "Zürich"}, {"limit", "3"}}) + glm_call("now", {}) + " ok", 2},
      {ToolCallFormat::Glm45Xml, false,
       "<think>r</think><tool_call>search<arg_key>query</arg_key><arg_value>x</arg_value></tool_call>", 1},
      {ToolCallFormat::Glm45Xml, false, "x <tool_call>bad name\n</tool_call> y <tool_call>f<arg_key>", 0},
  };
  std::mt19937 rng(4321);
  for (const Case& c : cases) {
    OutputParserOptions options = xml_options(c.format);
    options.starts_in_reasoning = c.starts_in_reasoning;
    const OutputDelta whole = feed(options, {c.text});
    ASSERT_EQ(whole.tool_calls.size(), c.num_calls) << c.text;
    for (int trial = 0; trial < 200; ++trial) {
      const OutputDelta split = trial == 0 ? feed_bytes(options, c.text) : feed(options, random_split(c.text, rng));
      ASSERT_EQ(split.reasoning, whole.reasoning) << c.text;
      ASSERT_EQ(split.content, whole.content) << c.text;
      ASSERT_EQ(split.tool_calls.size(), whole.tool_calls.size()) << c.text;
      for (size_t i = 0; i < whole.tool_calls.size(); ++i) {
        ASSERT_EQ(split.tool_calls[i].name, whole.tool_calls[i].name) << c.text;
        ASSERT_EQ(split.tool_calls[i].arguments_json, whole.tool_calls[i].arguments_json) << c.text;
      }
    }
  }
}

// ---- round trip through templates in each family's syntax ----------------------------

// Small templates written for this test in the two families' syntax (the real
// ones add tool descriptions, reasoning and tool results around the same call
// syntax): Qwen3-Coder prints a mapping or list value as JSON and anything else
// with `| string` (Python's True / None), GLM-4.5 every non-string as JSON.
const char* kQwenStyleTemplate = R"({%- for message in messages -%}
{%- if message.role == 'assistant' -%}
{{- '<|im_start|>assistant' -}}
{%- if message.content -%}{{- '\n' + message.content -}}{%- endif -%}
{%- for tool_call in message.tool_calls -%}
{%- set call = tool_call.function -%}
{{- '\n<tool_call>\n<function=' + call.name + '>\n' -}}
{%- for key, value in call.arguments|items -%}
{{- '<parameter=' + key + '>\n' -}}
{%- if value is mapping or (value is sequence and value is not string) -%}{{- value | tojson -}}
{%- else -%}{{- value | string -}}{%- endif -%}
{{- '\n</parameter>\n' -}}
{%- endfor -%}
{{- '</function>\n</tool_call>' -}}
{%- endfor -%}
{{- '<|im_end|>\n' -}}
{%- else -%}
{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}{%- endif -%})";

const char* kGlmStyleTemplate = R"({%- for m in messages -%}
{%- if m.role == 'assistant' -%}
<|assistant|>
{%- if m.content -%}{{ '\n' + m.content }}{%- endif -%}
{%- for tc in m.tool_calls -%}
{%- set f = tc.function -%}
{{ '\n<tool_call>' + f.name }}
{%- for k, v in f.arguments.items() -%}
{{ '\n<arg_key>' + k + '</arg_key>\n<arg_value>' }}{{ v | tojson if v is not string else v }}{{ '</arg_value>' }}
{%- endfor -%}
{{ '\n</tool_call>' }}
{%- endfor -%}
{%- else -%}
<|{{ m.role }}|>{{ '\n' + m.content }}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}<|assistant|>{%- endif -%})";

// What the model would have generated for an assistant turn with `calls`:
// the rendered conversation after the rendered prompt.
std::string rendered_output(const char* source, const ordered_json& calls) {
  ChatTemplate chat(source, "", "");
  ordered_json tool_calls = ordered_json::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    tool_calls.push_back({{"id", "call_" + std::to_string(i)},
                          {"type", "function"},
                          {"function", {{"name", calls[i]["name"]}, {"arguments", calls[i]["arguments"].dump()}}}});
  }
  const ordered_json user = {{"role", "user"}, {"content", "Do it."}};
  const ordered_json assistant = {{"role", "assistant"}, {"content", ""}, {"tool_calls", tool_calls}};
  ChatTemplateOptions with_prompt;
  ChatTemplateOptions without_prompt;
  without_prompt.add_generation_prompt = false;
  const std::string prompt = chat.render(ordered_json::array({user}), example_tools(), with_prompt);
  const std::string full = chat.render(ordered_json::array({user, assistant}), example_tools(), without_prompt);
  EXPECT_EQ(full.compare(0, prompt.size(), prompt), 0) << prompt << "\n---\n" << full;
  return full.substr(std::min(prompt.size(), full.size()));
}

const ordered_json& round_trip_calls() {
  static const ordered_json calls = ordered_json::parse(R"([
    {"name": "write_file", "arguments": {"path": "src/main.py", "content": "import os\n\nprint(os.getcwd())\n",
                                         "mode": 420, "append": true}},
    {"name": "search", "arguments": {"query": "TODO <fix>", "limit": 5, "ratio": 0.25, "filters": {"lang": ["py"]},
                                     "tags": [], "cursor": null, "exact": false, "kind": 2}}
  ])");
  return calls;
}

void expect_round_trip(const char* source, ToolCallFormat format, const std::string& end_of_turn,
                       const std::string& content) {
  ASSERT_EQ(detect_tool_call_format(source), format);
  std::string output = rendered_output(source, round_trip_calls());
  if (!end_of_turn.empty() && output.size() >= end_of_turn.size() &&
      output.compare(output.size() - end_of_turn.size(), end_of_turn.size(), end_of_turn) == 0) {
    output.resize(output.size() - end_of_turn.size());
  }
  SCOPED_TRACE(output);
  const OutputDelta d = feed_bytes(xml_options(format), output);
  EXPECT_EQ(d.content, content);
  ASSERT_EQ(d.tool_calls.size(), round_trip_calls().size());
  for (size_t i = 0; i < d.tool_calls.size(); ++i) {
    EXPECT_EQ(d.tool_calls[i].name, round_trip_calls()[i]["name"]);
    EXPECT_EQ(args_of(d.tool_calls[i]), round_trip_calls()[i]["arguments"]);
  }
}

TEST(XmlToolCallParser, RoundTripsQwenStyleTemplate) {
  // The exact text (checked against Python jinja2 3.1 rendering the same template and messages).
  const std::string output = rendered_output(kQwenStyleTemplate, ordered_json::array({round_trip_calls()[0]}));
  EXPECT_EQ(output,
            "<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/main.py\n</parameter>\n"
            "<parameter=content>\nimport os\n\nprint(os.getcwd())\n\n</parameter>\n<parameter=mode>\n420\n</parameter>\n"
            "<parameter=append>\nTrue\n</parameter>\n</function>\n</tool_call><|im_end|>\n");
  expect_round_trip(kQwenStyleTemplate, ToolCallFormat::Qwen3CoderXml, "<|im_end|>\n", "");
}

TEST(XmlToolCallParser, RoundTripsGlmStyleTemplate) {
  const std::string output = rendered_output(kGlmStyleTemplate, ordered_json::array({round_trip_calls()[0]}));
  EXPECT_EQ(output,
            "\n<tool_call>write_file\n<arg_key>path</arg_key>\n<arg_value>src/main.py</arg_value>\n"
            "<arg_key>content</arg_key>\n<arg_value>import os\n\nprint(os.getcwd())\n</arg_value>\n"
            "<arg_key>mode</arg_key>\n<arg_value>420</arg_value>\n<arg_key>append</arg_key>\n"
            "<arg_value>true</arg_value>\n</tool_call>");
  // The newline the template puts between <|assistant|> and the first call is content.
  expect_round_trip(kGlmStyleTemplate, ToolCallFormat::Glm45Xml, "", "\n");
}

}  // namespace
}  // namespace llmesh
