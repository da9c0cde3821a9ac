#include "api/responses_stream.h"

#include <algorithm>

#include "api/responses_items.h"

namespace llmesh::api {

using nlohmann::json;

namespace {

bool is_whitespace_only(const std::string& text) { return text.find_first_not_of(" \t\r\n") == std::string::npos; }

}  // namespace

ResponsesEventWriter::ResponsesEventWriter(ResponseEnvelope envelope, bool include_encrypted_reasoning)
    : envelope_(std::move(envelope)), include_encrypted_reasoning_(include_encrypted_reasoning) {}

json ResponsesEventWriter::event(const std::string& type, json fields) {
  fields["type"] = type;
  fields["sequence_number"] = next_sequence_number_++;
  return fields;
}

std::vector<json> ResponsesEventWriter::start() {
  const json in_progress = envelope_.build("in_progress", json::array(), nullptr, nullptr, nullptr);
  std::vector<json> events;
  events.push_back(event("response.created", {{"response", in_progress}}));
  events.push_back(event("response.in_progress", {{"response", in_progress}}));
  return events;
}

std::vector<json> ResponsesEventWriter::push(const text::OutputDelta& delta) {
  std::vector<json> events;
  if (!delta.reasoning.empty()) add_reasoning(delta.reasoning, events);
  if (!delta.content.empty()) add_text(delta.content, events);
  for (const auto& call : delta.tool_calls) add_tool_call(call, events);
  return events;
}

void ResponsesEventWriter::open(ItemKind kind, std::vector<json>& events) {
  close(events, "completed");
  OpenItem item{kind, make_item_id(kind == ItemKind::Reasoning ? "rs_" : "msg_"), int64_t(output_.size()), ""};
  if (kind == ItemKind::Reasoning) {
    events.push_back(event("response.output_item.added",
                           {{"output_index", item.output_index},
                            {"item", reasoning_item_json(item.item_id, "", /*announced_only=*/true, std::nullopt)}}));
    events.push_back(
        event("response.reasoning_summary_part.added", {{"item_id", item.item_id},
                                                        {"output_index", item.output_index},
                                                        {"summary_index", 0},
                                                        {"part", {{"type", "summary_text"}, {"text", ""}}}}));
  } else {
    events.push_back(event("response.output_item.added",
                           {{"output_index", item.output_index},
                            {"item", message_item_json(item.item_id, "", "in_progress", /*announced_only=*/true)}}));
    events.push_back(event("response.content_part.added", {{"item_id", item.item_id},
                                                           {"output_index", item.output_index},
                                                           {"content_index", 0},
                                                           {"part", output_text_part_json("")}}));
  }
  open_ = std::move(item);
}

void ResponsesEventWriter::close(std::vector<json>& events, const std::string& message_status) {
  if (!open_) return;
  const OpenItem& item = *open_;
  json done_item;
  if (item.kind == ItemKind::Reasoning) {
    const json part = {{"type", "summary_text"}, {"text", item.text}};
    events.push_back(event(
        "response.reasoning_summary_text.done",
        {{"item_id", item.item_id}, {"output_index", item.output_index}, {"summary_index", 0}, {"text", item.text}}));
    events.push_back(
        event("response.reasoning_summary_part.done",
              {{"item_id", item.item_id}, {"output_index", item.output_index}, {"summary_index", 0}, {"part", part}}));
    std::optional<std::string> encrypted;
    if (include_encrypted_reasoning_) encrypted = encode_reasoning_content(item.text);
    done_item = reasoning_item_json(item.item_id, item.text, /*announced_only=*/false, encrypted);
  } else {
    events.push_back(event("response.output_text.done", {{"item_id", item.item_id},
                                                         {"output_index", item.output_index},
                                                         {"content_index", 0},
                                                         {"text", item.text},
                                                         {"logprobs", json::array()}}));
    events.push_back(event("response.content_part.done", {{"item_id", item.item_id},
                                                          {"output_index", item.output_index},
                                                          {"content_index", 0},
                                                          {"part", output_text_part_json(item.text)}}));
    done_item = message_item_json(item.item_id, item.text, message_status, /*announced_only=*/false);
  }
  events.push_back(event("response.output_item.done", {{"output_index", item.output_index}, {"item", done_item}}));
  output_.push_back(std::move(done_item));
  open_.reset();
}

void ResponsesEventWriter::add_reasoning(const std::string& text, std::vector<json>& events) {
  held_whitespace_.clear();  // layout between text and a new reasoning block
  if (!open_ || open_->kind != ItemKind::Reasoning) open(ItemKind::Reasoning, events);
  open_->text += text;
  all_reasoning_ += text;
  events.push_back(event(
      "response.reasoning_summary_text.delta",
      {{"item_id", open_->item_id}, {"output_index", open_->output_index}, {"summary_index", 0}, {"delta", text}}));
}

void ResponsesEventWriter::add_text(const std::string& text, std::vector<json>& events) {
  std::string delta = text;
  if (!open_ || open_->kind != ItemKind::Message) {
    if (is_whitespace_only(text)) {
      held_whitespace_ += text;
      return;
    }
    delta = std::move(held_whitespace_) + text;
    held_whitespace_.clear();
    open(ItemKind::Message, events);
  }
  open_->text += delta;
  events.push_back(event("response.output_text.delta", {{"item_id", open_->item_id},
                                                        {"output_index", open_->output_index},
                                                        {"content_index", 0},
                                                        {"delta", delta},
                                                        {"logprobs", json::array()}}));
}

void ResponsesEventWriter::add_tool_call(const text::ParsedToolCall& call, std::vector<json>& events) {
  close(events, "completed");
  held_whitespace_.clear();
  const std::string item_id = make_item_id("fc_");
  const int64_t output_index = int64_t(output_.size());
  events.push_back(event("response.output_item.added",
                         {{"output_index", output_index},
                          {"item", function_call_item_json(item_id, call.id, call.name, "", "in_progress")}}));
  // The parser hands over whole calls, so the arguments arrive as one delta.
  events.push_back(event("response.function_call_arguments.delta",
                         {{"item_id", item_id}, {"output_index", output_index}, {"delta", call.arguments_json}}));
  events.push_back(event(
      "response.function_call_arguments.done",
      {{"item_id", item_id}, {"output_index", output_index}, {"name", call.name}, {"arguments", call.arguments_json}}));
  json done_item = function_call_item_json(item_id, call.id, call.name, call.arguments_json, "completed");
  events.push_back(event("response.output_item.done", {{"output_index", output_index}, {"item", done_item}}));
  output_.push_back(std::move(done_item));
}

std::vector<json> ResponsesEventWriter::finish(engine::FinishReason reason, const ResponsesUsage& usage) {
  std::vector<json> events;
  const bool truncated = reason == engine::FinishReason::Length;
  close(events, truncated ? "incomplete" : "completed");
  if (reason == engine::FinishReason::Aborted) {
    final_response_ = envelope_.build("failed", output_, usage.to_json(),
                                      {{"code", "server_error"}, {"message", "the generation was aborted"}}, nullptr);
    events.push_back(event("response.failed", {{"response", final_response_}}));
  } else if (truncated) {
    final_response_ =
        envelope_.build("incomplete", output_, usage.to_json(), nullptr, {{"reason", "max_output_tokens"}});
    events.push_back(event("response.incomplete", {{"response", final_response_}}));
  } else {
    final_response_ = envelope_.build("completed", output_, usage.to_json(), nullptr, nullptr);
    events.push_back(event("response.completed", {{"response", final_response_}}));
  }
  return events;
}

std::vector<json> ResponsesEventWriter::fail(const std::string& code, const std::string& message) {
  // Items left open stay unfinished: the failed response lists only the completed ones.
  open_.reset();
  final_response_ = envelope_.build("failed", output_, nullptr, {{"code", code}, {"message", message}}, nullptr);
  return {event("response.failed", {{"response", final_response_}})};
}

std::vector<json> ResponsesEventWriter::keepalive() { return {event("keepalive")}; }

int64_t estimate_reasoning_tokens(const text::Tokenizer& tokenizer, const std::string& reasoning_text,
                                  int64_t num_output_tokens) {
  if (reasoning_text.empty()) return 0;
  constexpr int64_t kNumTagTokens = 2;  // <think> and </think>
  const int64_t estimate = int64_t(tokenizer.encode(reasoning_text, /*parse_special=*/false).size()) + kNumTagTokens;
  return std::min(estimate, num_output_tokens);
}

}  // namespace llmesh::api
