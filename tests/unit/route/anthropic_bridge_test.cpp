#include "route/anthropic_bridge.h"

#include <gtest/gtest.h>

#include "api/api_error.h"

namespace llmesh::route {
namespace {

using nlohmann::json;
using OJson = nlohmann::ordered_json;

// The events of an SSE text: [{event, data}] with data parsed.
std::vector<std::pair<std::string, json>> parse_sse(const std::string& text) {
  std::vector<std::pair<std::string, json>> events;
  std::string event;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    const std::string line = text.substr(start, nl - start);
    if (line.rfind("event: ", 0) == 0) event = line.substr(7);
    if (line.rfind("data: ", 0) == 0) events.emplace_back(event, json::parse(line.substr(6)));
  }
  return events;
}

std::string chunk(const json& j) { return "data: " + j.dump() + "\n\n"; }

TEST(AnthropicBridge, RequestKeepsSystemInPlaceAndMapsToolsBothWays) {
  const json body = {
      {"model", "claude-x"},
      {"max_tokens", 100},
      {"stream", true},
      {"stop_sequences", {"END"}},
      {"system", json::array({{{"type", "text"}, {"text", "x-anthropic-billing-header: cc_version=1;"}},
                              {{"type", "text"}, {"text", "You are helpful."}}})},
      {"tools", json::array({{{"name", "get_weather"}, {"description", "Weather"},
                              {"input_schema", {{"type", "object"}, {"properties", {{"city", {{"type", "string"}}}}}}}}})},
      {"tool_choice", {{"type", "any"}}},
      {"thinking", {{"type", "enabled"}, {"budget_tokens", 1024}}},
      {"messages",
       json::array({{{"role", "user"}, {"content", "Weather in Paris?"}},
                    {{"role", "system"}, {"content", "Reminder: be kind."}},
                    {{"role", "assistant"},
                     {"content", json::array({{{"type", "thinking"}, {"thinking", "Use the tool."}, {"signature", "s"}},
                                              {{"type", "tool_use"}, {"id", "toolu_1"}, {"name", "get_weather"},
                                               {"input", {{"city", "Paris"}}}}})}},
                    {{"role", "user"},
                     {"content", json::array({{{"type", "tool_result"}, {"tool_use_id", "toolu_1"}, {"content", "18C"}},
                                              {{"type", "text"}, {"text", "Thanks"}}})}}})}};
  const OJson chat = chat_body_for_messages(body.dump());
  EXPECT_EQ(chat["model"], "claude-x");
  EXPECT_EQ(chat["max_tokens"], 100);
  EXPECT_EQ(chat["stop"], json::array({"END"}));
  EXPECT_EQ(chat["tool_choice"], "required");
  EXPECT_EQ(chat["tools"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(chat["chat_template_kwargs"]["enable_thinking"], true);
  EXPECT_FALSE(chat["chat_template_kwargs"].contains("reasoning_effort"));  // no output_config.effort
  EXPECT_EQ(chat["stream_options"]["include_usage"], true);
  const OJson& m = chat["messages"];
  ASSERT_EQ(m.size(), 6u);
  EXPECT_EQ(m[0]["role"], "system");
  EXPECT_EQ(m[0]["content"], "You are helpful.");  // billing header dropped
  EXPECT_EQ(m[1]["role"], "user");
  EXPECT_EQ(m[2]["role"], "system");  // kept where the client put it
  EXPECT_EQ(m[3]["role"], "assistant");
  EXPECT_EQ(m[3]["reasoning_content"], "Use the tool.");
  EXPECT_EQ(m[3]["tool_calls"][0]["function"]["arguments"], R"({"city":"Paris"})");  // JSON text for OpenAI
  EXPECT_EQ(m[4]["role"], "tool");
  EXPECT_EQ(m[4]["tool_call_id"], "toolu_1");
  EXPECT_EQ(m[5]["content"], "Thanks");
}

// output_config.effort reaches the upstream as the template's level (gpt-oss's harmony Reasoning line).
TEST(AnthropicBridge, EffortBecomesTheTemplatesLevel) {
  for (const auto& [effort, level] : {std::pair{"max", "high"}, {"medium", "medium"}, {"low", "low"}}) {
    const json body = {{"model", "m"},
                       {"max_tokens", 10},
                       {"thinking", {{"type", "adaptive"}}},
                       {"output_config", {{"effort", effort}}},
                       {"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}};
    const OJson chat = chat_body_for_messages(body.dump());
    EXPECT_FALSE(chat.contains("reasoning_effort")) << effort;  // the budget stays the client's
    EXPECT_EQ(chat["chat_template_kwargs"]["reasoning_effort"], level) << effort;
    EXPECT_EQ(chat["chat_template_kwargs"]["enable_thinking"], true) << effort;
  }
}

TEST(AnthropicBridge, InvalidBodiesGetServesAnthropic400) {
  try {
    chat_body_for_messages(R"({"model":"m","messages":[{"role":"user","content":"hi"}]})");
    FAIL() << "no error";
  } catch (const api::ApiError& e) {
    EXPECT_EQ(e.http_status(), 400);
    EXPECT_NE(std::string(e.what()).find("max_tokens"), std::string::npos);
  }
}

TEST(AnthropicBridge, StreamBecomesAnthropicEventsInOrder) {
  MessagesFromChat t("claude-x", {});
  t.begin(200, "text/event-stream");
  EXPECT_EQ(t.content_type(), "text/event-stream");
  std::string upstream;
  upstream += chunk({{"choices", json::array({{{"index", 0}, {"delta", {{"role", "assistant"}, {"content", ""}}}}})}});
  upstream += chunk({{"choices", json::array({{{"index", 0}, {"delta", {{"reasoning_content", "Let me think."}}}}})}});
  upstream += chunk({{"choices", json::array({{{"index", 0}, {"delta", {{"content", "Calling."}}}}})}});
  upstream += chunk({{"choices", json::array({{{"index", 0}, {"delta", {{"tool_calls", json::array({{{"index", 0},
      {"id", "call_abc"}, {"type", "function"}, {"function", {{"name", "get_weather"}, {"arguments", "{\"ci"}}}}})}}}}})}});
  upstream += chunk({{"choices", json::array({{{"index", 0}, {"delta", {{"tool_calls", json::array({{{"index", 0},
      {"function", {{"arguments", "ty\":\"Paris\"}"}}}}})}}}}})}});
  upstream += chunk({{"choices", json::array({{{"index", 0}, {"delta", json::object()}, {"finish_reason", "tool_calls"}}})}});
  upstream += chunk({{"choices", json::array()},
                     {"usage", {{"prompt_tokens", 50}, {"completion_tokens", 9}, {"prompt_tokens_details", {{"cached_tokens", 32}}}}}});
  upstream += "data: [DONE]\n\n";
  // Fed in pieces that split lines and events anywhere.
  std::string client;
  for (size_t i = 0; i < upstream.size(); i += 7) client += t.translate(std::string_view(upstream).substr(i, 7));
  client += t.finish(true);
  const auto events = parse_sse(client);
  std::vector<std::string> types;
  for (const auto& [event, data] : events) {
    EXPECT_EQ(event, data["type"]);  // the SDK drops events without a matching event: line
    types.push_back(data["type"]);
  }
  const std::vector<std::string> want = {
      "message_start",
      "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",  // thinking + signature
      "content_block_start", "content_block_delta", "content_block_stop",                         // text
      "content_block_start", "content_block_delta", "content_block_stop",                         // tool_use
      "message_delta", "message_stop"};
  ASSERT_EQ(types, want) << client;
  EXPECT_EQ(events[1].second["content_block"]["type"], "thinking");
  EXPECT_EQ(events[3].second["delta"]["type"], "signature_delta");
  EXPECT_EQ(events[8].second["content_block"]["type"], "tool_use");
  EXPECT_EQ(events[8].second["content_block"]["id"], "toolu_abc");
  EXPECT_EQ(json::parse(events[9].second["delta"]["partial_json"].get<std::string>())["city"], "Paris");
  const json& delta = events[11].second;
  EXPECT_EQ(delta["delta"]["stop_reason"], "tool_use");
  EXPECT_EQ(delta["usage"]["input_tokens"], 18);
  EXPECT_EQ(delta["usage"]["cache_read_input_tokens"], 32);
  EXPECT_EQ(delta["usage"]["output_tokens"], 9);
}

TEST(AnthropicBridge, WholeCompletionFoldsIntoOneMessage) {
  MessagesFromChat t("claude-x", {"END"});
  t.begin(200, "application/json");
  const json completion = {
      {"id", "chatcmpl-1"},
      {"choices", json::array({{{"index", 0},
                                {"message", {{"role", "assistant"}, {"content", "Hello"}, {"reasoning_content", "hm"}}},
                                {"finish_reason", "stop"},
                                {"stop_reason", "END"}}})},
      {"usage", {{"prompt_tokens", 10}, {"completion_tokens", 2}}}};
  std::string out = t.translate(completion.dump());
  out += t.finish(true);
  const json m = json::parse(out);
  EXPECT_EQ(m["type"], "message");
  EXPECT_EQ(m["model"], "claude-x");
  ASSERT_EQ(m["content"].size(), 2u);
  EXPECT_EQ(m["content"][0]["type"], "thinking");  // thinking first
  EXPECT_FALSE(m["content"][0]["signature"].get<std::string>().empty());
  EXPECT_EQ(m["content"][1]["text"], "Hello");
  EXPECT_EQ(m["stop_reason"], "stop_sequence");
  EXPECT_EQ(m["stop_sequence"], "END");
  EXPECT_EQ(m["usage"]["input_tokens"], 10);
  EXPECT_EQ(m["usage"]["output_tokens"], 2);
}

TEST(AnthropicBridge, UpstreamErrorsTakeAnthropicsShape) {
  MessagesFromChat t("m", {});
  t.begin(400, "application/json");
  t.translate(R"({"error":{"message":"This model's maximum context length is 4096 tokens. However, you requested )"
              R"(9000 tokens (8990 in the messages, 10 in the completion).","type":"BadRequestError"}})");
  const json e = json::parse(t.finish(true));
  EXPECT_EQ(e["type"], "error");
  EXPECT_EQ(e["error"]["type"], "invalid_request_error");
  EXPECT_EQ(e["error"]["message"].get<std::string>().rfind("prompt is too long: 8990 tokens > 4096 maximum", 0), 0u)
      << e.dump();
  MessagesFromChat broken("m", {});
  broken.begin(200, "text/event-stream");
  broken.translate(chunk({{"choices", json::array({{{"index", 0}, {"delta", {{"content", "Hi"}}}}})}}));
  const auto events = parse_sse(broken.finish(false));
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().first, "error");
}

}  // namespace
}  // namespace llmesh::route
