#include "route/response_observer.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace llmesh::route {

using nlohmann::json;

namespace {

constexpr size_t kMaxJsonBodyBytes = 4u << 20;

int64_t int_field(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : -1;
}

bool nonempty_string(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() && !it->get_ref<const std::string&>().empty();
}

// A chunk or event that carries generated output (or the finish, when nothing came before it).
bool carries_output(const json& ev, const std::string& type) {
  if (type == "content_block_delta" || type == "message_delta" || type == "response.completed") return true;
  if (type.starts_with("response.") && type.ends_with(".delta")) return true;
  auto choices = ev.find("choices");
  if (choices == ev.end() || !choices->is_array()) return false;
  for (const json& c : *choices) {
    if (!c.is_object()) continue;
    if (nonempty_string(c, "text")) return true;  // completions
    if (auto fr = c.find("finish_reason"); fr != c.end() && fr->is_string()) return true;
    auto delta = c.find("delta");
    if (delta == c.end() || !delta->is_object()) continue;
    if (nonempty_string(*delta, "content") || nonempty_string(*delta, "reasoning_content") ||
        nonempty_string(*delta, "reasoning"))
      return true;
    if (auto tc = delta->find("tool_calls"); tc != delta->end() && tc->is_array() && !tc->empty()) return true;
  }
  return false;
}

std::string error_message(const json& error) {
  if (error.is_string()) return error.get<std::string>();
  if (error.is_object() && error.contains("message") && error["message"].is_string())
    return error["message"].get<std::string>();
  return error.dump();
}

}  // namespace

void ResponseObserver::feed(std::string_view bytes, double elapsed_s) {
  if (!sse_) {
    if (body_.size() + bytes.size() <= kMaxJsonBodyBytes) body_.append(bytes);
    else body_truncated_ = true;
    if (first_output_s_ < 0 && !bytes.empty()) first_output_s_ = elapsed_s;
    return;
  }
  size_t start = 0;
  for (size_t nl; (nl = bytes.find('\n', start)) != std::string_view::npos; start = nl + 1) {
    std::string_view piece = bytes.substr(start, nl - start);
    std::string_view line = piece;
    if (!line_.empty()) {
      line_.append(piece);
      line = line_;
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    last_line_blank_ = line.empty();
    if (line.starts_with("data:")) {
      line.remove_prefix(5);
      if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
      ++num_events_;
      on_payload(line, elapsed_s);
    }
    line_.clear();
  }
  if (start < bytes.size()) line_.append(bytes.substr(start));
}

void ResponseObserver::on_payload(std::string_view payload, double elapsed_s) {
  if (payload == "[DONE]") return;
  const bool interesting = first_output_s_ < 0 || payload.find("\"usage\"") != std::string_view::npos ||
                           payload.find("\"error\"") != std::string_view::npos;
  if (interesting) on_json(std::string(payload), elapsed_s, /*whole_body=*/false);
}

void ResponseObserver::finish(double elapsed_s) {
  if (!sse_ && !body_.empty() && !body_truncated_) on_json(body_, elapsed_s, /*whole_body=*/true);
}

void ResponseObserver::on_json(const std::string& text, double elapsed_s, bool whole_body) {
  const json ev = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!ev.is_object()) return;
  const std::string type = ev.contains("type") && ev["type"].is_string() ? ev["type"].get<std::string>() : "";
  if (auto e = ev.find("error"); e != ev.end() && !e->is_null() && (type.empty() || type == "error")) {
    error_ = error_message(*e);
  } else if (type == "response.failed" && ev.contains("response") && ev["response"].contains("error")) {
    error_ = error_message(ev["response"]["error"]);
  }
  if (!whole_body && first_output_s_ < 0 && carries_output(ev, type)) first_output_s_ = elapsed_s;
  const json* usage = nullptr;
  for (const json* holder : {&ev, ev.contains("message") ? &ev["message"] : nullptr,
                             ev.contains("response") ? &ev["response"] : nullptr}) {
    if (holder == nullptr || !holder->is_object()) continue;
    auto u = holder->find("usage");
    if (u != holder->end() && u->is_object()) {
      usage = &*u;
      break;
    }
  }
  if (usage == nullptr) return;
  const json& u = *usage;
  // Anthropic counts cached prompt tokens apart from input_tokens; a later event
  // (message_delta) may repeat input_tokens without them.
  if (const int64_t c = int_field(u, "cache_read_input_tokens"); c >= 0) anthropic_cache_read_ = c;
  if (const int64_t c = int_field(u, "cache_creation_input_tokens"); c >= 0) anthropic_cache_creation_ = c;
  const bool anthropic = anthropic_cache_read_ >= 0 || anthropic_cache_creation_ >= 0;
  if (const int64_t p = int_field(u, "prompt_tokens"); p >= 0) usage_.prompt_tokens = p;
  if (const int64_t in = int_field(u, "input_tokens"); in >= 0)
    usage_.prompt_tokens = anthropic ? in + std::max<int64_t>(0, anthropic_cache_read_) +
                                           std::max<int64_t>(0, anthropic_cache_creation_)
                                     : in;
  if (anthropic_cache_read_ >= 0) usage_.cached_tokens = anthropic_cache_read_;
  for (const char* details : {"prompt_tokens_details", "input_tokens_details"}) {
    auto d = u.find(details);
    if (d != u.end() && d->is_object())
      if (const int64_t c = int_field(*d, "cached_tokens"); c >= 0) usage_.cached_tokens = c;
  }
  if (const int64_t o = int_field(u, "completion_tokens"); o >= 0) usage_.output_tokens = o;
  if (const int64_t o = int_field(u, "output_tokens"); o >= 0) usage_.output_tokens = o;
}

}  // namespace llmesh::route
