// The Responses event writer: event order, indexes and sequence numbers, checked
// by replaying the events the way the official SDK's accumulator does
// (openai-node lib/responses/ResponseAccumulator) and comparing the rebuilt
// output with the final response.
#include <gtest/gtest.h>

#include "api/responses_items.h"
#include "api/responses_request.h"
#include "api/responses_stream.h"

namespace llmesh::api {

using engine::FinishReason;
using engine::SamplingParams;
using text::OutputDelta;

namespace {

using nlohmann::json;

ResponsesEventWriter make_writer(bool include_encrypted = false, const char* body = R"({"input": "hi"})") {
  const ResponsesRequest request = parse_responses_request(json::parse(body));
  ResponseEnvelope envelope(request, "resp_test", 1700000000, "tiny", SamplingParams{});
  return ResponsesEventWriter(std::move(envelope), include_encrypted);
}

OutputDelta reasoning(std::string text) {
  OutputDelta d;
  d.reasoning = std::move(text);
  return d;
}
OutputDelta content(std::string text) {
  OutputDelta d;
  d.content = std::move(text);
  return d;
}
OutputDelta tool_call(std::string id, std::string name, std::string arguments) {
  OutputDelta d;
  d.tool_calls.push_back({std::move(id), std::move(name), std::move(arguments)});
  return d;
}

struct Replay {
  json snapshot;  // the response as the SDK rebuilds it
  std::vector<std::string> types;
  std::string output_text;     // concatenated output_text deltas
  std::string reasoning_text;  // concatenated summary deltas
};

// Applies events like the SDK: a delta or part at an index that was not added first is an error.
Replay replay(const std::vector<json>& events) {
  Replay r;
  std::optional<int64_t> open_index;
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    const std::string type = e.at("type");
    r.types.push_back(type);
    EXPECT_EQ(e.at("sequence_number"), int64_t(i)) << type;
    if (i == 0) {
      EXPECT_EQ(type, "response.created");
      r.snapshot = e.at("response");
      continue;
    }
    if (type != "response.output_item.added" && e.contains("output_index")) {
      const int64_t index = e["output_index"];
      EXPECT_TRUE(open_index && *open_index == index) << type << " at output_index " << index << " not open";
      EXPECT_LT(index, int64_t(r.snapshot["output"].size())) << type;
      if (e.contains("item_id")) {
        EXPECT_EQ(e["item_id"], r.snapshot["output"][index]["id"]) << type;
      }
    }
    if (type == "response.in_progress" || type == "response.completed" || type == "response.incomplete" ||
        type == "response.failed") {
      r.snapshot = e.at("response");
    } else if (type == "response.output_item.added") {
      EXPECT_FALSE(open_index.has_value()) << "two items open at once";
      EXPECT_EQ(e["output_index"], r.snapshot["output"].size());
      open_index = e["output_index"].get<int64_t>();
      r.snapshot["output"].push_back(e["item"]);
    } else if (type == "response.output_item.done") {
      EXPECT_EQ(open_index, e["output_index"].get<int64_t>());
      r.snapshot["output"][e["output_index"].get<size_t>()] = e["item"];
      open_index.reset();
    } else if (type == "response.content_part.added") {
      json& item = r.snapshot["output"][e["output_index"].get<size_t>()];
      EXPECT_EQ(e["content_index"], item["content"].size());
      item["content"].push_back(e["part"]);
    } else if (type == "response.output_text.delta") {
      json& item = r.snapshot["output"][e["output_index"].get<size_t>()];
      json& part = item["content"].at(e["content_index"].get<size_t>());
      EXPECT_EQ(part["type"], "output_text");
      part["text"] = part["text"].get<std::string>() + e["delta"].get<std::string>();
      r.output_text += e["delta"].get<std::string>();
    } else if (type == "response.output_text.done" || type == "response.content_part.done") {
      const json& item = r.snapshot["output"][e["output_index"].get<size_t>()];
      const std::string text = type == "response.output_text.done" ? e["text"] : e["part"]["text"];
      EXPECT_EQ(item["content"].at(e["content_index"].get<size_t>())["text"], text);
    } else if (type == "response.reasoning_summary_part.added") {
      json& item = r.snapshot["output"][e["output_index"].get<size_t>()];
      EXPECT_EQ(item["type"], "reasoning");
      EXPECT_EQ(e["summary_index"], item["summary"].size());
      item["summary"].push_back(e["part"]);
    } else if (type == "response.reasoning_summary_text.delta") {
      json& part =
          r.snapshot["output"][e["output_index"].get<size_t>()]["summary"].at(e["summary_index"].get<size_t>());
      part["text"] = part["text"].get<std::string>() + e["delta"].get<std::string>();
      r.reasoning_text += e["delta"].get<std::string>();
    } else if (type == "response.reasoning_summary_text.done" || type == "response.reasoning_summary_part.done") {
      const json& part =
          r.snapshot["output"][e["output_index"].get<size_t>()]["summary"].at(e["summary_index"].get<size_t>());
      EXPECT_EQ(part["text"], type == "response.reasoning_summary_text.done" ? e["text"] : e["part"]["text"]);
    } else if (type == "response.function_call_arguments.delta") {
      json& item = r.snapshot["output"][e["output_index"].get<size_t>()];
      EXPECT_EQ(item["type"], "function_call");
      item["arguments"] = item["arguments"].get<std::string>() + e["delta"].get<std::string>();
    } else if (type == "response.function_call_arguments.done") {
      EXPECT_EQ(r.snapshot["output"][e["output_index"].get<size_t>()]["arguments"], e["arguments"]);
    } else if (type != "keepalive") {
      ADD_FAILURE() << "unexpected event " << type;
    }
  }
  EXPECT_FALSE(open_index.has_value()) << "an item was never done";
  return r;
}

std::vector<json> run(ResponsesEventWriter& writer, const std::vector<OutputDelta>& deltas, FinishReason reason,
                      ResponsesUsage usage = {}) {
  std::vector<json> events = writer.start();
  for (const auto& d : deltas) {
    for (auto& e : writer.push(d)) events.push_back(std::move(e));
  }
  for (auto& e : writer.finish(reason, usage)) events.push_back(std::move(e));
  return events;
}

TEST(ResponsesStream, ReasoningThenTextThenToolCall) {
  auto writer = make_writer();
  ResponsesUsage usage;
  usage.num_input_tokens = 100;
  usage.num_cached_tokens = 64;
  usage.num_output_tokens = 30;
  usage.num_reasoning_tokens = 12;
  const auto events = run(writer,
                          {reasoning("Let me "), reasoning("think."), content("Hello"), content(" world"),
                           tool_call("call_abc", "get_weather", R"({"city":"Paris"})")},
                          FinishReason::Eos, usage);
  const std::vector<std::string> expected_types = {
      "response.created",
      "response.in_progress",
      "response.output_item.added",  // reasoning
      "response.reasoning_summary_part.added",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.done",
      "response.reasoning_summary_part.done",
      "response.output_item.done",
      "response.output_item.added",  // message
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",  // function call
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
  };
  const Replay r = replay(events);
  EXPECT_EQ(r.types, expected_types);
  EXPECT_EQ(r.output_text, "Hello world");
  EXPECT_EQ(r.reasoning_text, "Let me think.");

  const json& response = writer.final_response();
  EXPECT_EQ(response["status"], "completed");
  EXPECT_EQ(response["object"], "response");
  EXPECT_EQ(response["id"], "resp_test");
  EXPECT_TRUE(response["error"].is_null());
  EXPECT_TRUE(response["incomplete_details"].is_null());
  EXPECT_EQ(response["output"], r.snapshot["output"]);  // the stream rebuilds exactly the final output
  ASSERT_EQ(response["output"].size(), 3u);
  EXPECT_EQ(response["output"][0]["type"], "reasoning");
  EXPECT_EQ(response["output"][0]["summary"][0]["text"], "Let me think.");
  EXPECT_FALSE(response["output"][0].contains("encrypted_content"));
  EXPECT_EQ(response["output"][1]["type"], "message");
  EXPECT_EQ(response["output"][1]["status"], "completed");
  EXPECT_EQ(response["output"][1]["content"][0]["text"], "Hello world");
  EXPECT_EQ(response["output"][2]["type"], "function_call");
  EXPECT_EQ(response["output"][2]["call_id"], "call_abc");
  EXPECT_EQ(response["output"][2]["name"], "get_weather");
  EXPECT_EQ(response["output"][2]["arguments"], R"({"city":"Paris"})");
  EXPECT_EQ(response["usage"], json::parse(R"({"input_tokens": 100, "input_tokens_details": {"cached_tokens": 64},
      "output_tokens": 30, "output_tokens_details": {"reasoning_tokens": 12}, "total_tokens": 130})"));
  // Item ids are distinct and carry their kind's prefix.
  EXPECT_EQ(response["output"][0]["id"].get<std::string>().substr(0, 3), "rs_");
  EXPECT_EQ(response["output"][1]["id"].get<std::string>().substr(0, 4), "msg_");
  EXPECT_EQ(response["output"][2]["id"].get<std::string>().substr(0, 3), "fc_");
}

TEST(ResponsesStream, WhitespaceBetweenToolCallsMakesNoMessage) {
  auto writer = make_writer();
  const auto events = run(writer,
                          {content("\n"), tool_call("call_1", "f", "{}"), content("\n\n"),
                           tool_call("call_2", "g", R"({"x":1})"), content("\n")},
                          FinishReason::Eos);
  replay(events);
  const json& output = writer.final_response()["output"];
  ASSERT_EQ(output.size(), 2u);
  EXPECT_EQ(output[0]["name"], "f");
  EXPECT_EQ(output[1]["name"], "g");
}

TEST(ResponsesStream, LeadingWhitespaceJoinsTheMessageThatFollows) {
  auto writer = make_writer();
  const auto events = run(writer, {content("\n"), content("  Hi")}, FinishReason::StopSequence);
  const Replay r = replay(events);
  EXPECT_EQ(writer.final_response()["output"][0]["content"][0]["text"], "\n  Hi");
  EXPECT_EQ(r.output_text, "\n  Hi");
}

TEST(ResponsesStream, TextAfterAToolCallIsANewMessage) {
  auto writer = make_writer();
  const auto events =
      run(writer, {content("a"), tool_call("call_1", "f", "{}"), content("b"), reasoning("r")}, FinishReason::Eos);
  replay(events);
  const json& output = writer.final_response()["output"];
  ASSERT_EQ(output.size(), 4u);
  EXPECT_EQ(output[0]["type"], "message");
  EXPECT_EQ(output[1]["type"], "function_call");
  EXPECT_EQ(output[2]["type"], "message");
  EXPECT_EQ(output[3]["type"], "reasoning");
}

TEST(ResponsesStream, MaxOutputTokensIsIncomplete) {
  auto writer = make_writer(false, R"({"input": "hi", "max_output_tokens": 4})");
  const auto events = run(writer, {content("abc")}, FinishReason::Length);
  const Replay r = replay(events);
  EXPECT_EQ(r.types.back(), "response.incomplete");
  const json& response = writer.final_response();
  EXPECT_EQ(response["status"], "incomplete");
  EXPECT_EQ(response["incomplete_details"]["reason"], "max_output_tokens");
  EXPECT_EQ(response["max_output_tokens"], 4);
  EXPECT_EQ(response["output"][0]["status"], "incomplete");
}

TEST(ResponsesStream, EmptyOutputStillCompletes) {
  auto writer = make_writer();
  const auto events = run(writer, {}, FinishReason::Eos);
  const Replay r = replay(events);
  EXPECT_EQ(r.types, (std::vector<std::string>{"response.created", "response.in_progress", "response.completed"}));
  EXPECT_TRUE(writer.final_response()["output"].empty());
}

TEST(ResponsesStream, FailureEndsTheStreamWithResponseFailed) {
  auto writer = make_writer();
  std::vector<json> events = writer.start();
  for (auto& e : writer.push(content("partial"))) events.push_back(std::move(e));
  for (auto& e : writer.keepalive()) events.push_back(std::move(e));
  const auto failed = writer.fail("server_error", "generation failed: boom");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0]["type"], "response.failed");
  EXPECT_EQ(failed[0]["sequence_number"], int64_t(events.size()));
  EXPECT_EQ(failed[0]["response"]["status"], "failed");
  EXPECT_EQ(failed[0]["response"]["error"]["code"], "server_error");
  EXPECT_EQ(failed[0]["response"]["error"]["message"], "generation failed: boom");
  EXPECT_TRUE(failed[0]["response"]["output"].empty());  // the unfinished message is not reported as done
}

TEST(ResponsesStream, EncryptedReasoningRoundTripsThroughTheNextRequest) {
  auto writer = make_writer(/*include_encrypted=*/true);
  const std::string thought = "Line one.\n\nLine two with \"quotes\" and ünïcode.";
  run(writer, {reasoning(thought), tool_call("call_9", "f", "{}")}, FinishReason::Eos);
  const json& output = writer.final_response()["output"];
  ASSERT_TRUE(output[0].contains("encrypted_content"));
  // The client echoes the items back (summary dropped, as a lossy client might).
  json echoed = output[0];
  echoed["summary"] = json::array();
  echoed["content"] = nullptr;
  const json input = json::array({{{"role", "user"}, {"content", "q"}},
                                  echoed,
                                  output[1],
                                  {{"type", "function_call_output"}, {"call_id", "call_9"}, {"output", "ok"}}});
  const json messages = responses_input_to_messages(input, nullptr);
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[1]["reasoning_content"], thought);
  EXPECT_EQ(messages[1]["tool_calls"][0]["id"], "call_9");
  EXPECT_EQ(messages[2]["tool_call_id"], "call_9");
}

TEST(ResponsesStream, EnvelopeEchoesTheRequest) {
  auto writer = make_writer(false, R"({"input": "hi", "instructions": "Be kind.", "store": false,
      "tools": [{"type": "function", "name": "f"}, {"type": "web_search"}], "tool_choice": "auto",
      "reasoning": {"effort": "low", "summary": "auto"}, "metadata": {"a": "b"}, "parallel_tool_calls": false})");
  const auto events = writer.start();
  const json& created = events[0]["response"];
  EXPECT_EQ(created["status"], "in_progress");
  EXPECT_EQ(created["instructions"], "Be kind.");
  EXPECT_EQ(created["store"], false);
  EXPECT_EQ(created["tools"].size(), 2u);
  EXPECT_EQ(created["tool_choice"], "auto");
  EXPECT_EQ(created["reasoning"], json::parse(R"({"effort": "low", "summary": "auto"})"));
  EXPECT_EQ(created["metadata"], json::parse(R"({"a": "b"})"));
  EXPECT_EQ(created["parallel_tool_calls"], false);
  EXPECT_EQ(created["model"], "tiny");
  EXPECT_EQ(created["created_at"], 1700000000);
  EXPECT_TRUE(created["usage"].is_null());
  EXPECT_TRUE(created["output"].empty());
}

}  // namespace
}  // namespace llmesh::api
