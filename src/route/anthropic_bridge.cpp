#include "route/anthropic_bridge.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "api/anthropic_error.h"
#include "api/anthropic_request.h"
#include "api/server_context.h"
#include "api/sse.h"

namespace llmesh::route {

using nlohmann::json;
using OJson = nlohmann::ordered_json;

namespace {

// Template-style tool calls (arguments an object) -> OpenAI's (arguments JSON text).
OJson openai_messages(const OJson& messages) {
  OJson out = OJson::array();
  for (const OJson& m : messages) {
    OJson copy = m;
    if (auto calls = copy.find("tool_calls"); calls != copy.end()) {
      for (OJson& call : *calls) {
        OJson& arguments = call["function"]["arguments"];
        if (!arguments.is_string()) arguments = arguments.dump();
      }
    }
    out.push_back(std::move(copy));
  }
  return out;
}

std::string text_of(const json& v) { return v.is_string() ? v.get<std::string>() : ""; }

// The message of an upstream error body, whatever its shape.
std::string upstream_error_message(const std::string& body, int status) {
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) {
    if (auto e = j.find("error"); e != j.end()) {
      if (e->is_string()) return e->get<std::string>();
      if (e->is_object() && e->contains("message") && (*e)["message"].is_string())
        return (*e)["message"].get<std::string>();
    }
    if (j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
    if (j.contains("detail") && j["detail"].is_string()) return j["detail"].get<std::string>();  // FastAPI
  }
  if (!body.empty()) return "upstream: " + body.substr(0, 500);
  return "upstream answered HTTP " + std::to_string(status);
}

// The first integer after `marker` in text (-1 when absent).
int64_t number_after(const std::string& text, const std::string& marker) {
  const size_t at = text.find(marker);
  if (at == std::string::npos) return -1;
  size_t i = at + marker.size();
  while (i < text.size() && !std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  int64_t n = -1;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) n = (n < 0 ? 0 : n * 10) + (text[i] - '0');
  return n;
}

// OpenAI servers' "maximum context length is M tokens ... P in the prompt/messages"
// (or "the prompt has P tokens")
// in Anthropic's words, which Claude Code reads to compact the conversation:
// "prompt is too long: P tokens > M maximum". Other messages are kept.
std::string anthropic_error_message(const std::string& message) {
  const int64_t limit = number_after(message, "maximum context length is");
  if (limit <= 0) return message;
  int64_t prompt = -1;
  for (const char* unit : {" in the prompt", " in the messages", " tokens in the messages"}) {
    const size_t at = message.find(unit);
    if (at == std::string::npos) continue;
    size_t start = at;
    while (start > 0 && std::isdigit(static_cast<unsigned char>(message[start - 1]))) --start;
    if (start < at) prompt = std::stoll(message.substr(start, at - start));
    break;
  }
  if (prompt < 0) prompt = number_after(message, "prompt has");  // "... but the prompt has P tokens"
  if (prompt > limit) return fmt::format("prompt is too long: {} tokens > {} maximum ({})", prompt, limit, message);
  return message;
}

engine::FinishReason finish_reason_of(const std::string& reason, bool stopped_by_sequence) {
  if (reason == "length") return engine::FinishReason::Length;
  if (reason == "stop" && stopped_by_sequence) return engine::FinishReason::StopSequence;
  return engine::FinishReason::Eos;  // stop, tool_calls (the writer reports tool_use), others
}

}  // namespace

OJson chat_body_for_messages(const std::string& messages_body) {
  const OJson body = api::parse_ordered_json_body(messages_body);
  const api::MessagesRequest m = api::parse_messages_request(body, api::MessagesEndpoint::Create);
  OJson chat = OJson::object();
  if (!m.params.model.empty()) chat["model"] = m.params.model;
  OJson messages = openai_messages(m.messages);
  if (!m.assistant_prefill.empty()) {
    messages.push_back({{"role", "assistant"}, {"content", m.assistant_prefill}});
    chat["continue_final_message"] = true;  // vLLM/SGLang: continue the last message instead of a new turn
    chat["add_generation_prompt"] = false;
  }
  chat["messages"] = std::move(messages);
  if (m.params.max_tokens) chat["max_tokens"] = *m.params.max_tokens;
  if (m.params.temperature) chat["temperature"] = *m.params.temperature;
  if (m.params.top_p) chat["top_p"] = *m.params.top_p;
  if (m.params.top_k) chat["top_k"] = *m.params.top_k;
  if (!m.params.stop.empty()) chat["stop"] = m.params.stop;
  if (!m.tools.empty()) {
    chat["tools"] = m.tools;
    switch (m.tool_choice) {
      case api::ToolChoiceMode::Auto: break;
      case api::ToolChoiceMode::Any: chat["tool_choice"] = "required"; break;
      case api::ToolChoiceMode::None: chat["tool_choice"] = "none"; break;
      case api::ToolChoiceMode::Tool:
        chat["tool_choice"] = {{"type", "function"}, {"function", {{"name", m.forced_tool_name}}}};
        break;
    }
  }
  if (!m.output_schema.is_null())
    chat["response_format"] = {{"type", "json_schema"}, {"json_schema", {{"name", "output"}, {"schema", m.output_schema}}}};
  chat["chat_template_kwargs"] = {{"enable_thinking", m.enable_thinking}};
  // output_config.effort as the template's level (gpt-oss's Reasoning line). Only there: as chat's
  // reasoning_effort it would also set the upstream's reasoning budget, where "max" means none.
  if (m.reasoning_effort) chat["chat_template_kwargs"]["reasoning_effort"] = *m.reasoning_effort;
  if (m.params.stream) {
    chat["stream"] = true;
    chat["stream_options"] = {{"include_usage", true}};
  }
  return chat;
}

MessagesFromChat::MessagesFromChat(std::string model, std::vector<std::string> stop_sequences)
    : model_(std::move(model)),
      stop_sequences_(std::move(stop_sequences)),
      writer_(api::make_request_id("msg_"), model_) {}

void MessagesFromChat::begin(int upstream_status, const std::string& upstream_content_type) {
  status_ = upstream_status;
  if (upstream_status != 200) mode_ = Mode::error;
  else if (upstream_content_type.rfind("text/event-stream", 0) == 0) mode_ = Mode::stream;
  else mode_ = Mode::whole;
}

std::string MessagesFromChat::content_type() const {
  return mode_ == Mode::stream ? "text/event-stream" : "application/json";
}

std::string MessagesFromChat::render(const std::vector<json>& events) const {
  std::string out;
  for (const json& e : events) out += api::sse_event(e);
  return out;
}

void MessagesFromChat::on_chunk(const json& chunk, std::vector<json>& events) {
  if (!started_) {
    events.push_back(writer_.message_start(api::AnthropicUsage::from_counts(0, 0, 0)));
    started_ = true;
  }
  if (auto u = chunk.find("usage"); u != chunk.end() && u->is_object()) {
    prompt_tokens_ = u->value("prompt_tokens", prompt_tokens_);
    output_tokens_ = u->value("completion_tokens", output_tokens_);
    if (auto d = u->find("prompt_tokens_details"); d != u->end() && d->is_object())
      cached_tokens_ = d->value("cached_tokens", cached_tokens_);
  }
  auto choices = chunk.find("choices");
  if (choices == chunk.end() || !choices->is_array() || choices->empty()) return;
  const json& choice = (*choices)[0];
  text::OutputDelta delta;
  if (auto d = choice.find("delta"); d != choice.end() && d->is_object()) {
    delta.reasoning = text_of(d->value("reasoning_content", json()));
    if (delta.reasoning.empty()) delta.reasoning = text_of(d->value("reasoning", json()));
    delta.content = text_of(d->value("content", json()));
    if (auto calls = d->find("tool_calls"); calls != d->end() && calls->is_array()) {
      int64_t position = 0;
      for (const json& call : *calls) {
        const int64_t index = call.contains("index") && call["index"].is_number_integer() ? call["index"].get<int64_t>()
                                                                                          : position;
        ++position;
        PendingToolCall& pending = tool_calls_[index];
        if (call.contains("id") && call["id"].is_string() && pending.id.empty()) pending.id = call["id"];
        if (auto fn = call.find("function"); fn != call.end() && fn->is_object()) {
          if (fn->contains("name") && (*fn)["name"].is_string()) pending.name += (*fn)["name"].get<std::string>();
          if (auto args = fn->find("arguments"); args != fn->end())
            pending.arguments += args->is_string() ? args->get<std::string>() : args->dump();
        }
      }
    }
  }
  for (json& e : writer_.push(delta)) events.push_back(std::move(e));
  if (auto fr = choice.find("finish_reason"); fr != choice.end() && fr->is_string()) {
    finish_reason_ = fr->get<std::string>();
    // vLLM names the stop string that matched in `stop_reason`.
    if (auto sr = choice.find("stop_reason"); sr != choice.end() && sr->is_string()) {
      const std::string s = sr->get<std::string>();
      if (std::find(stop_sequences_.begin(), stop_sequences_.end(), s) != stop_sequences_.end()) matched_stop_ = s;
    }
  }
}

// Tool calls (complete now), then message_delta and message_stop.
void MessagesFromChat::close(std::vector<json>& events) {
  if (closed_) return;
  if (!started_) {
    events.push_back(writer_.message_start(api::AnthropicUsage::from_counts(0, 0, 0)));
    started_ = true;
  }
  text::OutputDelta calls;
  for (auto& [index, call] : tool_calls_) {
    calls.tool_calls.push_back({call.id.empty() ? api::make_request_id("call_") : call.id, call.name,
                                call.arguments.empty() ? "{}" : call.arguments});
  }
  tool_calls_.clear();
  for (json& e : writer_.push(calls)) events.push_back(std::move(e));
  const auto usage = api::AnthropicUsage::from_counts(prompt_tokens_, cached_tokens_, output_tokens_);
  for (json& e : writer_.finish(finish_reason_of(finish_reason_, !matched_stop_.empty()), matched_stop_, usage))
    events.push_back(std::move(e));
  closed_ = true;
}

std::string MessagesFromChat::translate(std::string_view bytes) {
  if (mode_ != Mode::stream) {
    body_.append(bytes);
    return "";
  }
  std::vector<json> events;
  body_.append(bytes);
  size_t start = 0;
  for (size_t nl; (nl = body_.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string_view line(body_.data() + start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (closed_ || !line.starts_with("data:")) continue;
    line.remove_prefix(5);
    if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (line == "[DONE]") {
      close(events);
      continue;
    }
    const json chunk = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!chunk.is_object()) continue;
    if (auto e = chunk.find("error"); e != chunk.end() && !e->is_null()) {
      events.push_back(api::anthropic_error_body(502, upstream_error_message(chunk.dump(), 502)));
      closed_ = true;
      continue;
    }
    on_chunk(chunk, events);
  }
  body_.erase(0, start);
  return render(events);
}

std::string MessagesFromChat::finish(bool upstream_ok) {
  if (mode_ == Mode::error) {
    return api::dump_json(
        api::anthropic_error_body(status_, anthropic_error_message(upstream_error_message(body_, status_))));
  }
  if (mode_ == Mode::whole) {
    const json completion = json::parse(body_, nullptr, /*allow_exceptions=*/false);
    if (!upstream_ok || !completion.is_object() || !completion.contains("choices"))
      return api::dump_json(api::anthropic_error_body(502, "the upstream's chat completion could not be read"));
    // The whole message as one chunk: the same events a stream would give, folded.
    json chunk = {{"choices", json::array()}};
    if (completion.contains("usage")) chunk["usage"] = completion["usage"];
    if (completion["choices"].is_array() && !completion["choices"].empty()) {
      const json& choice = completion["choices"][0];
      json one = {{"delta", choice.value("message", json::object())}};
      for (const char* key : {"finish_reason", "stop_reason"})
        if (choice.contains(key)) one[key] = choice[key];
      chunk["choices"].push_back(std::move(one));
    }
    std::vector<json> events;
    on_chunk(chunk, events);
    close(events);
    const OJson message = api::fold_message_events(events);
    return message.dump(-1, ' ', false, OJson::error_handler_t::replace);
  }
  std::vector<json> events;
  if (!closed_) {
    if (upstream_ok && !finish_reason_.empty()) {
      close(events);
    } else {
      events.push_back(api::anthropic_error_body(
          502, upstream_ok ? "the upstream's stream ended without a finish" : "the upstream failed mid-stream"));
      closed_ = true;
    }
  }
  return render(events);
}

}  // namespace llmesh::route
