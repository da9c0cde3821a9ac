// Real model chat templates rendered by llmesh must match Python jinja2 byte for byte.
// Goldens: tests/golden/templates/<family>.{jinja,jsonl}, made by tools/gen_template_goldens.py.
#include <gtest/gtest.h>

#include <ctime>

#include "text/tool_call_format.h"

#include "core/error.h"
#include "golden_test_util.h"
#include "text/chat_template.h"
#include "text/jinja/template.h"

namespace llmesh {

using text::ChatTemplate;
using text::ChatTemplateOptions;

namespace {

using jinja_test::first_difference;
using jinja_test::golden_path;
using jinja_test::read_jsonl;
using jinja_test::read_text_file;

ChatTemplateOptions options_from(const nlohmann::ordered_json& json) {
  ChatTemplateOptions options;
  options.add_generation_prompt = json.value("add_generation_prompt", true);
  if (json.contains("enable_thinking")) options.enable_thinking = json["enable_thinking"].get<bool>();
  if (json.contains("reasoning_effort")) options.reasoning_effort = json["reasoning_effort"].get<std::string>();
  if (json.contains("extra")) options.extra = nlohmann::json(json["extra"]);
  return options;
}

class GoldenTemplateTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTemplateTest, ChatTemplateMatchesPythonJinja) {
  const std::string family = GetParam();
  std::string source = read_text_file(golden_path(family + ".jinja"));
  std::vector<nlohmann::ordered_json> cases = read_jsonl(golden_path(family + ".jsonl"));
  ASSERT_FALSE(source.empty()) << "missing " << golden_path(family + ".jinja");
  ASSERT_GE(cases.size(), 20u);

  ChatTemplate chat_template(source, cases[0]["bos_token"].get<std::string>(), cases[0]["eos_token"].get<std::string>());
  text::jinja::Template raw_template(source);
  int num_checked = 0;
  for (const auto& test_case : cases) {
    const std::string name = test_case["name"].get<std::string>();
    SCOPED_TRACE(family + "/" + name);
    const auto& tools = test_case["tools"];
    ChatTemplateOptions options = options_from(test_case["options"]);

    // The context llmesh builds must be the one the reference rendered.
    nlohmann::ordered_json context = chat_template.make_context(test_case["messages"], tools, options);
    EXPECT_EQ(context.dump(), test_case["context"].dump());

    if (test_case.value("error", false)) {
      EXPECT_THROW(chat_template.render(test_case["messages"], tools, options), Error)
          << "reference raised: " << test_case["message"];
      EXPECT_THROW(raw_template.render(test_case["context"]), Error);
    } else {
      const std::string expected = test_case["expected"].get<std::string>();
      std::string actual;
      try {
        actual = chat_template.render(test_case["messages"], tools, options);
      } catch (const Error& error) {
        ADD_FAILURE() << "unexpected error: " << error.what();
        continue;
      }
      EXPECT_EQ(actual, expected) << first_difference(expected, actual);
      EXPECT_EQ(raw_template.render(test_case["context"]), expected);
    }
    ++num_checked;
  }
  EXPECT_EQ(num_checked, static_cast<int>(cases.size()));
}

INSTANTIATE_TEST_SUITE_P(Families, GoldenTemplateTest,
                         ::testing::Values("qwen3", "qwen2_5", "llama3_1", "llama3_2", "deepseek_v3", "mistral_nemo", "gemma3",
                                           "gptoss"));

TEST(ChatTemplateTest, DeepSeekTakesStringArgumentsOthersObjects) {
  ChatTemplate deepseek(read_text_file(golden_path("deepseek_v3.jinja")), "<bos>", "<eos>");
  ChatTemplate qwen(read_text_file(golden_path("qwen2_5.jinja")), "", "<|im_end|>");
  EXPECT_TRUE(deepseek.wants_string_arguments());
  EXPECT_FALSE(qwen.wants_string_arguments());

  // OpenAI sends arguments as a JSON string: Qwen2.5 must print them once, not re-quoted.
  nlohmann::json messages = nlohmann::json::array(
      {{{"role", "user"}, {"content", "hi"}},
       {{"role", "assistant"},
        {"content", nullptr},
        {"tool_calls", {{{"id", "c1"}, {"type", "function"}, {"function", {{"name", "f"}, {"arguments", "{\"x\": 1}"}}}}}}}});
  std::string rendered = qwen.render(messages, nlohmann::json::array(), ChatTemplateOptions{});
  EXPECT_NE(rendered.find("\"arguments\": {\"x\": 1}"), std::string::npos) << rendered;
}

TEST(ChatTemplateTest, RaiseExceptionBecomesErrorWithMessage) {
  ChatTemplate mistral(read_text_file(golden_path("mistral_nemo.jinja")), "<s>", "</s>");
  nlohmann::json messages = nlohmann::json::array({{{"role", "user"}, {"content", "a"}}, {{"role", "user"}, {"content", "b"}}});
  try {
    mistral.render(messages, nlohmann::json(), ChatTemplateOptions{});
    FAIL() << "expected an error";
  } catch (const Error& error) {
    std::string message = error.what();
    EXPECT_NE(message.find("conversation roles must alternate"), std::string::npos) << message;
    EXPECT_EQ(message.rfind("chat_template line ", 0), 0u) << message;
  }
}

// Mistral's template takes back only 9-alphanumeric tool call ids; agents' ids (call_…, toolu_…)
// are mapped to stable ones before rendering, so a tool turn renders, the same way every time.
TEST(ChatTemplateTest, MistralToolCallIdsAreMadeAcceptable) {
  ChatTemplate mistral(read_text_file(golden_path("mistral_nemo.jinja")), "<s>", "</s>");
  nlohmann::ordered_json messages = nlohmann::ordered_json::parse(R"([
    {"role": "user", "content": "list files"},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "toolu_01ABCDEFGHIJ", "type": "function",
      "function": {"name": "ls", "arguments": {"path": "."}}}]},
    {"role": "tool", "tool_call_id": "toolu_01ABCDEFGHIJ", "content": "a.txt"}])");
  const nlohmann::ordered_json tools = nlohmann::ordered_json::array();
  EXPECT_THROW(mistral.render(messages, tools, ChatTemplateOptions{}), Error);
  EXPECT_TRUE(text::use_mistral_call_ids(messages));
  const std::string id = text::mistral_call_id("toolu_01ABCDEFGHIJ");
  EXPECT_EQ(messages[1]["tool_calls"][0]["id"], id);
  EXPECT_EQ(messages[2]["tool_call_id"], id);
  const std::string rendered = mistral.render(messages, tools, ChatTemplateOptions{});
  EXPECT_NE(rendered.find("[TOOL_CALLS][{\"name\": \"ls\""), std::string::npos) << rendered;
  EXPECT_NE(rendered.find(id), std::string::npos) << rendered;
  EXPECT_FALSE(text::use_mistral_call_ids(messages));  // already acceptable: nothing changes
}

// gpt-oss's harmony template (llmesh's own, tools/templates/harmony.jinja): the reasoning effort
// the APIs pass, today's date when no current_date is given, and the format it is detected as.
TEST(ChatTemplateTest, HarmonyTakesTheReasoningEffortAndToday) {
  const std::string source = read_text_file(golden_path("gptoss.jinja"));
  ChatTemplate harmony(source, "<|startoftext|>", "<|return|>");
  EXPECT_EQ(text::detect_tool_call_format(source), text::ToolCallFormat::Harmony);
  const nlohmann::json messages = nlohmann::json::array({{{"role", "user"}, {"content", "hi"}}});
  ChatTemplateOptions options;
  std::string rendered = harmony.render(messages, nlohmann::json(), options);
  EXPECT_NE(rendered.find("\nReasoning: medium\n"), std::string::npos) << rendered;
  char today[16];
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::strftime(today, sizeof(today), "%Y-%m-%d", &local);
  EXPECT_NE(rendered.find(std::string("Current date: ") + today + "\n"), std::string::npos) << rendered;
  EXPECT_EQ(rendered.substr(rendered.size() - 18), "<|start|>assistant") << rendered;
  for (const char* effort : {"low", "high"}) {
    options.reasoning_effort = effort;
    rendered = harmony.render(messages, nlohmann::json(), options);
    EXPECT_NE(rendered.find(std::string("\nReasoning: ") + effort + "\n"), std::string::npos) << rendered;
    EXPECT_EQ(rendered.find("Reasoning: medium"), std::string::npos);
  }
}

}  // namespace
}  // namespace llmesh
