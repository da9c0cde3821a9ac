#include "api/anthropic_stream.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

namespace llmesh::api {

using nlohmann::json;
using OJson = nlohmann::ordered_json;

namespace {

bool is_blank(std::string_view text) { return text.find_first_not_of(" \t\r\n") == std::string_view::npos; }

// The tool input as compact JSON text keeping the model's key order; nullopt when not an object.
std::optional<std::string> tool_input_json(const std::string& arguments_json) {
  try {
    OJson input = OJson::parse(arguments_json);
    if (input.is_object()) return input.dump();
  } catch (const OJson::parse_error&) {
  }
  return std::nullopt;
}

}  // namespace

AnthropicUsage AnthropicUsage::from_counts(int64_t num_prompt_tokens, int64_t num_cached_tokens,
                                           int64_t num_output_tokens) {
  AnthropicUsage usage;
  usage.cache_read_input_tokens = std::min(num_cached_tokens, num_prompt_tokens);
  usage.input_tokens = num_prompt_tokens - usage.cache_read_input_tokens;
  usage.output_tokens = num_output_tokens;
  return usage;
}

json AnthropicUsage::to_json() const {
  return {{"input_tokens", input_tokens},
          {"cache_creation_input_tokens", cache_creation_input_tokens},
          {"cache_read_input_tokens", cache_read_input_tokens},
          {"output_tokens", output_tokens}};
}

std::string_view anthropic_stop_reason(engine::FinishReason reason, bool emitted_tool_use) {
  switch (reason) {
    case engine::FinishReason::Length:
      return "max_tokens";
    case engine::FinishReason::StopSequence:
      return "stop_sequence";
    case engine::FinishReason::Eos:
      return emitted_tool_use ? "tool_use" : "end_turn";
    case engine::FinishReason::Repetition:  // the loop guard: the turn ends as if the model had stopped
      return "end_turn";
    case engine::FinishReason::Aborted:
    case engine::FinishReason::None:
      break;
  }
  return "end_turn";
}

std::string thinking_signature(std::string_view thinking) {
  // FNV-1a: stable across builds and platforms, which std::hash is not.
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : thinking) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return fmt::format("llmesh-thinking-{:016x}", hash);
}

std::string tool_use_id(const std::string& call_id) {
  constexpr std::string_view kCallPrefix = "call_";
  if (call_id.rfind(kCallPrefix, 0) == 0) return "toolu_" + call_id.substr(kCallPrefix.size());
  return "toolu_" + call_id;
}

AnthropicEventWriter::AnthropicEventWriter(std::string message_id, std::string model)
    : message_id_(std::move(message_id)), model_(std::move(model)) {}

json AnthropicEventWriter::message_start(const AnthropicUsage& usage) const {
  return {{"type", "message_start"},
          {"message",
           {{"id", message_id_},
            {"type", "message"},
            {"role", "assistant"},
            {"model", model_},
            {"content", json::array()},
            {"stop_reason", nullptr},
            {"stop_sequence", nullptr},
            {"usage", usage.to_json()}}}};
}

void AnthropicEventWriter::open(std::vector<json>& out, Block block) {
  close(out);
  json content_block;
  if (block == Block::Thinking) {
    content_block = {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}};
    thinking_text_.clear();
  } else {
    content_block = {{"type", "text"}, {"text", ""}};
  }
  out.push_back({{"type", "content_block_start"}, {"index", next_index_}, {"content_block", content_block}});
  open_block_ = block;
}

void AnthropicEventWriter::close(std::vector<json>& out) {
  if (open_block_ == Block::None) return;
  if (open_block_ == Block::Thinking) {
    out.push_back({{"type", "content_block_delta"},
                   {"index", next_index_},
                   {"delta", {{"type", "signature_delta"}, {"signature", thinking_signature(thinking_text_)}}}});
  }
  out.push_back({{"type", "content_block_stop"}, {"index", next_index_}});
  ++next_index_;
  open_block_ = Block::None;
}

void AnthropicEventWriter::add_tool_use(std::vector<json>& out, const text::ParsedToolCall& call) {
  const std::optional<std::string> input = tool_input_json(call.arguments_json);
  if (!input) {
    // Arguments that are not a JSON object cannot be a tool_use: show the call as text instead.
    text::OutputDelta as_text;
    as_text.content =
        "<tool_call>\n" + json({{"name", call.name}, {"arguments", call.arguments_json}}).dump() + "\n</tool_call>";
    for (auto& event : push(as_text)) out.push_back(std::move(event));
    return;
  }
  close(out);
  held_whitespace_.clear();
  out.push_back(
      {{"type", "content_block_start"},
       {"index", next_index_},
       {"content_block",
        {{"type", "tool_use"}, {"id", tool_use_id(call.id)}, {"name", call.name}, {"input", json::object()}}}});
  out.push_back({{"type", "content_block_delta"},
                 {"index", next_index_},
                 {"delta", {{"type", "input_json_delta"}, {"partial_json", *input}}}});
  out.push_back({{"type", "content_block_stop"}, {"index", next_index_}});
  ++next_index_;
  ++num_tool_uses_;
}

std::vector<json> AnthropicEventWriter::push(const text::OutputDelta& delta) {
  std::vector<json> out;
  if (!delta.reasoning.empty()) {
    if (open_block_ != Block::Thinking) {
      held_whitespace_.clear();
      open(out, Block::Thinking);
    }
    thinking_text_ += delta.reasoning;
    out.push_back({{"type", "content_block_delta"},
                   {"index", next_index_},
                   {"delta", {{"type", "thinking_delta"}, {"thinking", delta.reasoning}}}});
  }
  if (!delta.content.empty()) {
    std::string text = delta.content;
    if (open_block_ != Block::Text) {
      if (is_blank(text)) {
        held_whitespace_ += text;  // no empty-looking text block between thinking and a tool call
        text.clear();
      } else {
        text = held_whitespace_ + text;
        held_whitespace_.clear();
        open(out, Block::Text);
      }
    }
    if (!text.empty()) {
      out.push_back({{"type", "content_block_delta"},
                     {"index", next_index_},
                     {"delta", {{"type", "text_delta"}, {"text", text}}}});
    }
  }
  for (const auto& call : delta.tool_calls) add_tool_use(out, call);
  return out;
}

std::vector<json> AnthropicEventWriter::finish(engine::FinishReason reason, const std::string& stop_sequence,
                                               const AnthropicUsage& usage) {
  std::vector<json> out;
  close(out);
  if (next_index_ == 0) {
    // Claude Code fails a turn whose message has no content block: an empty answer is one empty text block.
    open(out, Block::Text);
    if (!held_whitespace_.empty()) {
      out.push_back({{"type", "content_block_delta"},
                     {"index", next_index_},
                     {"delta", {{"type", "text_delta"}, {"text", held_whitespace_}}}});
    }
    close(out);
  }
  json stop_sequence_value = nullptr;
  if (reason == engine::FinishReason::StopSequence && !stop_sequence.empty()) stop_sequence_value = stop_sequence;
  out.push_back(
      {{"type", "message_delta"},
       {"delta",
        {{"stop_reason", anthropic_stop_reason(reason, emitted_tool_use())}, {"stop_sequence", stop_sequence_value}}},
       {"usage", usage.to_json()}});
  out.push_back({{"type", "message_stop"}});
  return out;
}

OJson fold_message_events(const std::vector<json>& events) {
  OJson message;
  std::vector<std::string> partial_json;  // per block index
  for (const auto& event : events) {
    const std::string type = event.value("type", "");
    if (type == "message_start") {
      message = OJson::parse(event["message"].dump());
    } else if (type == "content_block_start") {
      message["content"].push_back(OJson::parse(event["content_block"].dump()));
      partial_json.emplace_back();
    } else if (type == "content_block_delta") {
      const size_t index = event["index"].get<size_t>();
      OJson& block = message["content"][index];
      const json& delta = event["delta"];
      const std::string delta_type = delta["type"].get<std::string>();
      if (delta_type == "text_delta")
        block["text"] = block["text"].get<std::string>() + delta["text"].get<std::string>();
      if (delta_type == "thinking_delta") {
        block["thinking"] = block["thinking"].get<std::string>() + delta["thinking"].get<std::string>();
      }
      if (delta_type == "signature_delta") block["signature"] = delta["signature"];
      if (delta_type == "input_json_delta") partial_json[index] += delta["partial_json"].get<std::string>();
    } else if (type == "content_block_stop") {
      const size_t index = event["index"].get<size_t>();
      OJson& block = message["content"][index];
      if (block["type"] == "tool_use" && !partial_json[index].empty())
        block["input"] = OJson::parse(partial_json[index]);
    } else if (type == "message_delta") {
      message["stop_reason"] = event["delta"]["stop_reason"];
      message["stop_sequence"] = event["delta"]["stop_sequence"];
      for (const auto& [key, value] : event["usage"].items()) message["usage"][key] = value;
    }
  }
  return message;
}

}  // namespace llmesh::api
