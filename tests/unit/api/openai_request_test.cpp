#include "api/openai_request.h"

#include <gtest/gtest.h>

#include "api/api_error.h"

namespace llmesh::api {

using engine::SamplingParams;
using model::GenerationDefaults;

namespace {

using nlohmann::json;

// The `param` of the ApiError that parsing `body` throws ("" when it does not throw).
std::string error_param(const json& body) {
  try {
    parse_chat_completion_request(body);
  } catch (const ApiError& e) {
    EXPECT_EQ(e.http_status(), 400);
    return e.param().empty() ? "<none>" : e.param();
  }
  return "";
}

json minimal() { return {{"model", "m"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}}; }

TEST(OpenAiRequest, MinimalChatRequest) {
  ChatCompletionRequest r = parse_chat_completion_request(minimal());
  EXPECT_EQ(r.params.model, "m");
  EXPECT_FALSE(r.params.max_tokens.has_value());
  EXPECT_FALSE(r.params.stream);
  EXPECT_FALSE(r.parse_tool_calls);
  EXPECT_EQ(r.messages[0]["content"], "hi");
}

TEST(OpenAiRequest, AllFieldsParsed) {
  json b = minimal();
  b["max_completion_tokens"] = 7;
  b["temperature"] = 0;
  b["top_p"] = 0.5;
  b["top_k"] = 20;
  b["min_p"] = 0.1;
  b["presence_penalty"] = 0.5;
  b["frequency_penalty"] = -0.5;
  b["repetition_penalty"] = 1.1;
  b["seed"] = 42;
  b["stop"] = "END";
  b["n"] = 1;
  b["logprobs"] = true;
  b["top_logprobs"] = 3;
  b["stream"] = true;
  b["stream_options"] = {{"include_usage", true}};
  b["ignore_eos"] = true;
  b["min_tokens"] = 2;
  b["chat_template_kwargs"] = {{"enable_thinking", false}};
  b["tools"] = {{{"type", "function"}, {"function", {{"name", "f"}, {"parameters", json::object()}}}}};
  b["tool_choice"] = "auto";
  ChatCompletionRequest r = parse_chat_completion_request(b);
  EXPECT_EQ(*r.params.max_tokens, 7);
  EXPECT_EQ(*r.params.temperature, 0.0f);
  EXPECT_EQ(*r.params.top_k, 20);
  EXPECT_EQ(*r.params.seed, 42u);
  EXPECT_EQ(r.params.stop, std::vector<std::string>{"END"});
  EXPECT_TRUE(r.params.logprobs);
  EXPECT_EQ(r.params.top_logprobs, 3);
  EXPECT_TRUE(r.params.include_usage);
  EXPECT_TRUE(r.params.ignore_eos);
  EXPECT_EQ(r.params.min_tokens, 2);
  EXPECT_EQ(r.enable_thinking, std::optional<bool>(false));
  EXPECT_TRUE(r.parse_tool_calls);
  SamplingParams s = r.params.sampling(GenerationDefaults{});
  EXPECT_EQ(s.temperature, 0.0f);
  EXPECT_FLOAT_EQ(s.min_p, 0.1f);
  EXPECT_FLOAT_EQ(s.repetition_penalty, 1.1f);
}

TEST(OpenAiRequest, ModelDefaultsFillUnsetSampling) {
  GenerationDefaults d;
  d.temperature = 0.6f;
  d.top_k = 20;
  ChatCompletionRequest r = parse_chat_completion_request(minimal());
  SamplingParams s = r.params.sampling(d);
  EXPECT_FLOAT_EQ(s.temperature, 0.6f);
  EXPECT_EQ(s.top_k, 20);
}

TEST(OpenAiRequest, TextPartsAreJoined) {
  json b = minimal();
  b["messages"][0]["content"] = {{{"type", "text"}, {"text", "a"}}, {{"type", "text"}, {"text", "b"}}};
  EXPECT_EQ(parse_chat_completion_request(b).messages[0]["content"], "a\nb");
}

TEST(OpenAiRequest, ErrorsNameTheField) {
  auto with = [](const char* key, json value) {
    json b = minimal();
    b[key] = value;
    return b;
  };
  EXPECT_EQ(error_param(with("temperature", "hot")), "temperature");
  EXPECT_EQ(error_param(with("temperature", 3)), "temperature");
  EXPECT_EQ(error_param(with("max_tokens", 0)), "max_tokens");
  EXPECT_EQ(error_param(with("max_tokens", 1.5)), "max_tokens");
  EXPECT_EQ(error_param(with("n", 2)), "n");
  EXPECT_EQ(error_param(with("stop", 5)), "stop");
  EXPECT_EQ(error_param(with("stream", "yes")), "stream");
  EXPECT_EQ(error_param(with("top_logprobs", 3)), "top_logprobs");  // without logprobs
  EXPECT_EQ(error_param(with("tools", "f")), "tools");
  EXPECT_EQ(error_param(with("messages", json::array())), "messages");
  EXPECT_EQ(error_param(with("messages", {{{"role", "wizard"}, {"content", "x"}}})), "messages[0].role");
  EXPECT_EQ(error_param(with("messages", {{{"role", "user"}}})), "messages[0].content");
  EXPECT_EQ(error_param(with("messages", {{{"role", "user"}, {"content", {{{"type", "image_url"}}}}}})),
            "messages[0].content[0].type");
  json no_messages = {{"model", "m"}};
  EXPECT_EQ(error_param(no_messages), "messages");
  EXPECT_EQ(error_param(minimal()), "");  // sanity: the base request is fine
}

TEST(OpenAiRequest, NullMeansAbsent) {
  json b = minimal();
  b["max_tokens"] = nullptr;
  b["temperature"] = nullptr;
  ChatCompletionRequest r = parse_chat_completion_request(b);
  EXPECT_FALSE(r.params.max_tokens.has_value());
  EXPECT_FALSE(r.params.temperature.has_value());
}

TEST(OpenAiRequest, MalformedJsonBody) {
  EXPECT_THROW(parse_json_body("{\"model\": "), ApiError);
  EXPECT_THROW(parse_json_body("[1,2]"), ApiError);
  EXPECT_EQ(parse_json_body("{\"a\":1}")["a"], 1);
}

TEST(OpenAiRequest, CompletionPrompts) {
  CompletionRequest a = parse_completion_request({{"prompt", "hello"}, {"logprobs", 2}});
  EXPECT_EQ(*a.prompt_text, "hello");
  EXPECT_TRUE(a.params.logprobs);
  EXPECT_EQ(a.params.top_logprobs, 2);
  CompletionRequest b = parse_completion_request({{"prompt", {1, 2, 3}}});
  EXPECT_EQ(b.prompt_ids, (std::vector<int32_t>{1, 2, 3}));
  CompletionRequest c = parse_completion_request({{"prompt", {"x"}}});
  EXPECT_EQ(*c.prompt_text, "x");
  EXPECT_THROW(parse_completion_request({{"prompt", {"x", "y"}}}), ApiError);
  EXPECT_THROW(parse_completion_request({{"max_tokens", 3}}), ApiError);
}

}  // namespace
}  // namespace llmesh::api
