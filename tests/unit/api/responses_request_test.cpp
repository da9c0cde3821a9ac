// POST /v1/responses bodies -> chat-template messages, tools and controls,
// and the prompts a Codex-shaped history renders to with the real Qwen3
// template (tests/golden/templates/qwen3.jinja).
#include <gtest/gtest.h>

#include "api/api_error.h"
#include "api/responses_items.h"
#include "api/responses_request.h"
#include "text/chat_template.h"

#include "golden_templates.h"

namespace llmesh::api {

using text::ChatTemplateOptions;

namespace {

using nlohmann::json;

ResponsesRequest parse(const char* body) { return parse_responses_request(json::parse(body)); }

// The ApiError a body raises (fails the test when it parses).
ApiError parse_error(const char* body) {
  try {
    parse_responses_request(json::parse(body));
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "expected an ApiError for " << body;
  return ApiError(0, "", "");
}

TEST(ResponsesRequest, StringInputIsOneUserMessage) {
  const auto r = parse(R"({"model": "m", "input": "Hello"})");
  EXPECT_EQ(r.messages, json::parse(R"([{"role": "user", "content": "Hello"}])"));
  EXPECT_EQ(r.params.model, "m");
  EXPECT_FALSE(r.params.stream);
  EXPECT_FALSE(r.params.max_tokens.has_value());
  EXPECT_EQ(r.tool_choice, ResponsesToolChoice::Auto);
  EXPECT_EQ(r.text_format, ResponsesTextFormat::Text);
  EXPECT_FALSE(r.enable_thinking.has_value());
}

TEST(ResponsesRequest, InstructionsComeFirstAndDeveloperIsSystem) {
  const auto r = parse(R"({"instructions": "Be brief.", "input": [
      {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Rules."}]},
      {"role": "user", "content": [{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}]}]})");
  EXPECT_EQ(r.messages, json::parse(R"([{"role": "system", "content": "Be brief."},
      {"role": "system", "content": "Rules."}, {"role": "user", "content": "a\nb"}])"));
  EXPECT_EQ(r.instructions, "Be brief.");
}

TEST(ResponsesRequest, GenerationControls) {
  const auto r = parse(R"({"input": "x", "max_output_tokens": 17, "temperature": 0.5, "top_p": 0.9,
      "stream": true, "store": false, "parallel_tool_calls": false, "metadata": {"k": "v"},
      "prompt_cache_key": "abc", "include": ["reasoning.encrypted_content"], "client_metadata": {"x": 1}})");
  EXPECT_EQ(r.params.max_tokens, 17);
  EXPECT_FLOAT_EQ(*r.params.temperature, 0.5f);
  EXPECT_FLOAT_EQ(*r.params.top_p, 0.9f);
  EXPECT_TRUE(r.params.stream);
  EXPECT_FALSE(r.store);
  EXPECT_FALSE(r.parallel_tool_calls);
  EXPECT_TRUE(r.include_encrypted_reasoning);
  EXPECT_EQ(r.metadata, json::parse(R"({"k": "v"})"));
  EXPECT_EQ(r.prompt_cache_key, "abc");
}

TEST(ResponsesRequest, CodexHistoryBecomesAssistantTurnsAndToolResults) {
  const std::string encrypted = encode_reasoning_content("I should list files.");
  const json body = {
      {"input",
       {{{"type", "message"}, {"role", "developer"}, {"content", {{{"type", "input_text"}, {"text", "sys"}}}}},
        {{"type", "message"}, {"role", "user"}, {"content", {{{"type", "input_text"}, {"text", "list"}}}}},
        {{"type", "reasoning"},
         {"id", "rs_1"},
         {"summary", {{{"type", "summary_text"}, {"text", "a lossy summary"}}}},
         {"content", nullptr},
         {"encrypted_content", encrypted}},
        {{"type", "function_call"},
         {"id", "fc_1"},
         {"call_id", "call_1"},
         {"name", "exec_command"},
         {"arguments", R"({"cmd":"ls"})"},
         {"status", "completed"}},
        {{"type", "function_call"}, {"call_id", "call_2"}, {"name", "exec_command"}, {"arguments", "{}"}},
        {{"type", "function_call_output"}, {"call_id", "call_1"}, {"output", "a.txt"}},
        {{"type", "function_call_output"}, {"call_id", "call_2"}, {"output", ""}},
        {{"type", "reasoning"}, {"summary", {{{"type", "summary_text"}, {"text", "done"}}}}},
        {{"type", "message"}, {"role", "assistant"}, {"content", {{{"type", "output_text"}, {"text", "a.txt"}}}}}}}};
  const auto r = parse_responses_request(body);
  const json expected = json::parse(R"([
    {"role": "system", "content": "sys"},
    {"role": "user", "content": "list"},
    {"role": "assistant", "content": "", "reasoning_content": "I should list files.", "tool_calls": [
      {"id": "call_1", "type": "function", "function": {"name": "exec_command", "arguments": "{\"cmd\":\"ls\"}"}},
      {"id": "call_2", "type": "function", "function": {"name": "exec_command", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"},
    {"role": "tool", "tool_call_id": "call_2", "content": ""},
    {"role": "assistant", "content": "a.txt", "reasoning_content": "done"}])");
  EXPECT_EQ(r.messages, expected) << r.messages.dump(2);
}

TEST(ResponsesRequest, AssistantTextAfterAToolCallStartsANewTurn) {
  const auto r = parse(R"({"input": [{"role": "user", "content": "q"},
      {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
      {"role": "assistant", "content": "after"},
      {"role": "assistant", "content": "again"}]})");
  ASSERT_EQ(r.messages.size(), 4u);
  EXPECT_EQ(r.messages[1]["tool_calls"].size(), 1u);
  EXPECT_EQ(r.messages[2], json::parse(R"({"role": "assistant", "content": "after"})"));
  EXPECT_EQ(r.messages[3], json::parse(R"({"role": "assistant", "content": "again"})"));
}

TEST(ResponsesRequest, ReasoningFallsBackToContentThenSummary) {
  const auto a = parse(R"({"input": [{"role": "user", "content": "q"},
      {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "raw"}],
       "encrypted_content": "gAAAAforeign"},
      {"role": "assistant", "content": "x"}]})");
  EXPECT_EQ(a.messages[1]["reasoning_content"], "raw");
  const auto b = parse(R"({"input": [{"role": "user", "content": "q"},
      {"type": "reasoning", "summary": [{"type": "summary_text", "text": "s1"}, {"type": "summary_text", "text": "s2"}]},
      {"role": "assistant", "content": "x"}]})");
  EXPECT_EQ(b.messages[1]["reasoning_content"], "s1\n\ns2");
}

TEST(ResponsesRequest, FunctionToolsConvertOthersAreIgnored) {
  const auto r = parse(R"({"input": "x", "tools": [
      {"type": "function", "name": "exec_command", "description": "Runs", "strict": false,
       "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}},
      {"type": "web_search"},
      {"type": "namespace", "name": "mcp", "tools": []},
      {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}}]})");
  EXPECT_EQ(r.tools, json::parse(R"([{"type": "function", "function": {"name": "exec_command", "description": "Runs",
      "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}}])"));
  EXPECT_EQ(r.ignored_tool_types, (std::vector<std::string>{"web_search", "namespace", "custom"}));
  EXPECT_EQ(r.tools_echo.size(), 4u);
}

TEST(ResponsesRequest, ToolChoice) {
  const char* tools = R"("tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}])";
  auto r = parse((std::string(R"({"input": "x", "tool_choice": "required", )") + tools + "}").c_str());
  EXPECT_EQ(r.tool_choice, ResponsesToolChoice::Required);
  r = parse(
      (std::string(R"({"input": "x", "tool_choice": {"type": "function", "name": "f"}, )") + tools + "}").c_str());
  EXPECT_EQ(r.tool_choice, ResponsesToolChoice::Named);
  EXPECT_EQ(r.forced_tool_name, "f");
  r = parse((std::string(R"({"input": "x", "tool_choice": "none", )") + tools + "}").c_str());
  EXPECT_EQ(r.tool_choice, ResponsesToolChoice::None);

  EXPECT_EQ(
      parse_error(
          (std::string(R"({"input": "x", "tool_choice": {"type": "function", "name": "g"}, )") + tools + "}").c_str())
          .param(),
      "tool_choice.name");
  EXPECT_EQ(parse_error(R"({"input": "x", "tool_choice": "required"})").param(), "tool_choice");
  EXPECT_EQ(parse_error(R"({"input": "x", "tool_choice": "sometimes"})").param(), "tool_choice");
}

TEST(ResponsesRequest, ReasoningEffortIsTheThinkingSwitch) {
  EXPECT_EQ(parse(R"({"input": "x", "reasoning": {"effort": "none"}})").enable_thinking, false);
  EXPECT_EQ(parse(R"({"input": "x", "reasoning": {"effort": "off"}})").enable_thinking, false);
  EXPECT_EQ(parse(R"({"input": "x", "reasoning": {"effort": "minimal"}})").enable_thinking, true);
  EXPECT_EQ(parse(R"({"input": "x", "reasoning": {"effort": "minimal"}})").reasoning_budget_tokens,
            std::optional<int64_t>(256));
  EXPECT_EQ(parse(R"({"input": "x", "reasoning": {"effort": "medium"}})").reasoning_budget_tokens,
            std::optional<int64_t>(4096));
  EXPECT_FALSE(parse(R"({"input": "x", "reasoning": {"effort": "xhigh"}})").reasoning_budget_tokens.has_value());
  EXPECT_FALSE(parse(R"({"input": "x", "reasoning": {"effort": "none"}})").reasoning_budget_tokens.has_value());
  EXPECT_EQ(parse(R"({"input": "x", "reasoning": {"effort": "high", "summary": "auto"}})").enable_thinking, true);
  const auto summary_only = parse(R"({"input": "x", "reasoning": {"summary": "auto"}})");
  EXPECT_FALSE(summary_only.enable_thinking.has_value());
  EXPECT_EQ(summary_only.reasoning_echo, json::parse(R"({"effort": null, "summary": "auto"})"));
  EXPECT_EQ(parse_error(R"({"input": "x", "reasoning": {"effort": "extreme"}})").param(), "reasoning.effort");
}

TEST(ResponsesRequest, TextFormats) {
  const auto s = parse(R"({"input": "x", "text": {"format": {"type": "json_schema", "name": "out", "strict": true,
      "schema": {"type": "object", "properties": {"a": {"type": "integer"}}}}, "verbosity": "low"}})");
  EXPECT_EQ(s.text_format, ResponsesTextFormat::JsonSchema);
  EXPECT_EQ(s.text_schema["properties"]["a"]["type"], "integer");
  EXPECT_EQ(s.text_echo["verbosity"], "low");
  EXPECT_EQ(s.text_echo["format"]["name"], "out");
  const auto o = parse(R"({"input": "x", "text": {"format": {"type": "json_object"}}})");
  EXPECT_EQ(o.text_format, ResponsesTextFormat::JsonObject);
  EXPECT_EQ(o.text_schema, json::parse(R"({"type": "object"})"));
  EXPECT_EQ(parse_error(R"({"input": "x", "text": {"format": {"type": "json_schema", "name": "n"}}})").param(),
            "text.format.schema");
  EXPECT_EQ(parse_error(R"({"input": "x", "text": {"format": {"type": "yaml"}}})").param(), "text.format.type");
}

TEST(ResponsesRequest, MalformedBodiesName400Fields) {
  EXPECT_EQ(parse_error(R"({"model": "m"})").param(), "input");
  EXPECT_EQ(parse_error(R"({"input": 5})").param(), "input");
  EXPECT_EQ(parse_error(R"({"input": []})").param(), "input");
  EXPECT_EQ(parse_error(R"({"input": [{"content": "no role"}]})").param(), "input[0].type");
  EXPECT_EQ(parse_error(R"({"input": [{"type": "message", "role": "wizard", "content": "x"}]})").param(),
            "input[0].role");
  EXPECT_EQ(parse_error(R"({"input": [{"type": "function_call", "name": "f", "arguments": "{}"}]})").param(),
            "input[0].call_id");
  EXPECT_EQ(parse_error(R"({"input": [{"type": "teleport"}]})").param(), "input");  // ignored: no message left
  EXPECT_EQ(parse_error(R"({"input": "x", "temperature": 3})").param(), "temperature");
  EXPECT_EQ(parse_error(R"({"input": "x", "max_output_tokens": 0})").param(), "max_output_tokens");
  EXPECT_EQ(parse_error(R"({"input": "x", "tools": {"type": "function"}})").param(), "tools");
  EXPECT_EQ(parse_error(R"({"input": "x", "tools": [{"type": "function"}]})").param(), "tools[0].name");
  const ApiError image = parse_error(R"({"input": [{"role": "user", "content": [
      {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}]}]})");
  EXPECT_EQ(image.http_status(), 400);
  EXPECT_EQ(image.param(), "input[0].content[0].type");
  EXPECT_NE(std::string(image.what()).find("text only"), std::string::npos);
}

TEST(ResponsesRequest, StatefulFeaturesWithoutAStoreAreAClear400) {
  const ApiError previous = parse_error(R"({"input": "x", "previous_response_id": "resp_123"})");
  EXPECT_EQ(previous.http_status(), 400);
  EXPECT_EQ(previous.param(), "previous_response_id");
  EXPECT_EQ(parse_error(R"({"input": [{"type": "item_reference", "id": "msg_1"}]})").param(), "input[0].type");
  // Echoed hosted-tool records are skipped, not an error.
  const auto r = parse(R"({"input": [{"role": "user", "content": "q"},
      {"type": "web_search_call", "id": "ws_1", "status": "completed"}]})");
  EXPECT_EQ(r.messages.size(), 1u);
}

TEST(ResponsesRequest, PreviousResponseIdPrependsTheStoredConversation) {
  ResponseStore store;
  const json first_items = json::parse(R"([{"type": "message", "role": "user", "content": "My name is Ada."},
      {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hi Ada."}]}])");
  store.put("resp_1", first_items);
  const auto r = parse_responses_request(json::parse(R"({"previous_response_id": "resp_1",
      "instructions": "Be brief.", "input": "What is my name?"})"),
                                         &store);
  EXPECT_EQ(r.previous_response_id, "resp_1");
  // Instructions first (they are not carried over from the previous response), then the history, then the input.
  EXPECT_EQ(r.messages, json::parse(R"([{"role": "system", "content": "Be brief."},
      {"role": "user", "content": "My name is Ada."}, {"role": "assistant", "content": "Hi Ada."},
      {"role": "user", "content": "What is my name?"}])"));
  ASSERT_EQ(r.conversation_items.size(), 3u);
  EXPECT_EQ(r.conversation_items[2],
            json::parse(R"({"type": "message", "role": "user", "content": "What is my name?"})"));

  try {
    parse_responses_request(json::parse(R"({"previous_response_id": "resp_gone", "input": "x"})"), &store);
    ADD_FAILURE() << "an unknown id parsed";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.http_status(), 400);
    EXPECT_EQ(e.param(), "previous_response_id");
    EXPECT_NE(std::string(e.what()).find("not found"), std::string::npos);
  }
}

// --- The rendered prompt of a Codex-like session stays an exact prefix of the next turn's.

std::string render(const json& body) {
  const auto r = parse_responses_request(body);
  ChatTemplateOptions options;
  options.enable_thinking = r.enable_thinking;
  return qwen3_template().render(r.messages, r.tools, options);
}

TEST(ResponsesRequest, CodexTurnsRenderAsPrefixesOfTheNextTurn) {
  json tools = json::array({{{"type", "function"},
                             {"name", "exec_command"},
                             {"parameters", {{"type", "object"}, {"properties", {{"cmd", {{"type", "string"}}}}}}}},
                            {{"type", "web_search"}}});
  json input = json::array(
      {{{"type", "message"},
        {"role", "developer"},
        {"content", {{{"type", "input_text"}, {"text", "You are Codex."}}}}},
       {{"type", "message"}, {"role", "user"}, {"content", {{{"type", "input_text"}, {"text", "list files"}}}}}});
  std::string previous;
  for (int turn = 0; turn < 4; ++turn) {
    const json body = {{"input", input}, {"tools", tools}, {"reasoning", {{"effort", "high"}}}};
    const std::string prompt = render(body);
    if (turn > 0) {
      EXPECT_EQ(prompt.substr(0, previous.size()), previous) << "turn " << turn;
    }
    EXPECT_EQ(prompt.substr(prompt.size() - 22), "<|im_start|>assistant\n");
    previous = prompt;
    // What the model "generated" this turn, as Codex echoes it back.
    const std::string call_id = "call_" + std::to_string(turn);
    input.push_back({{"type", "reasoning"},
                     {"summary", {{{"type", "summary_text"}, {"text", "thinking " + std::to_string(turn)}}}},
                     {"content", nullptr},
                     {"encrypted_content", encode_reasoning_content("thinking " + std::to_string(turn))}});
    input.push_back(
        {{"type", "function_call"}, {"call_id", call_id}, {"name", "exec_command"}, {"arguments", R"({"cmd": "ls"})"}});
    input.push_back({{"type", "function_call_output"}, {"call_id", call_id}, {"output", "a.txt\nb.txt"}});
  }
  // The reasoning of a tool-calling turn is kept in the history (Qwen3 drops it only before the last user query).
  EXPECT_NE(previous.find("<think>\nthinking 2\n</think>"), std::string::npos) << previous;
  EXPECT_NE(previous.find("<tool_response>\na.txt\nb.txt\n</tool_response>"), std::string::npos);
}

}  // namespace
}  // namespace llmesh::api
