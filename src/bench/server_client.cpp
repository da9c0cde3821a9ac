#include "bench/server_client.h"

#include <fmt/format.h>
#include <httplib.h>

#include <cmath>

#include "core/error.h"

namespace llmesh::bench {

using nlohmann::json;

namespace {

std::string base_url(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.ends_with("/v1")) url.resize(url.size() - 3);
  check(url.starts_with("http://") || url.starts_with("https://"), "--url {}: expected http://host:port", url);
  const size_t path_start = url.find('/', url.find("//") + 2);
  check(path_start == std::string::npos, "--url {}: a path prefix other than /v1 is not supported", url);
  return url;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

int64_t int_or(const json& j, const char* key, int64_t fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<int64_t>() : fallback;
}

bool nonempty_string(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() && !it->get_ref<const std::string&>().empty();
}

// What one stream has told us so far; folded into the record at the end.
struct StreamState {
  bool saw_done = false, saw_finish = false, saw_error = false;
  std::string error;
};

void read_openai_usage(const json& usage, RequestRecord& r) {
  r.prompt_tokens = int_or(usage, "prompt_tokens", r.prompt_tokens);
  r.completion_tokens = int_or(usage, "completion_tokens", r.completion_tokens);
  if (auto d = usage.find("prompt_tokens_details"); d != usage.end() && d->is_object())
    r.cached_tokens = int_or(*d, "cached_tokens", r.cached_tokens);
}

// One OpenAI chat chunk. Returns true when it carried generated text.
bool on_openai_event(const json& ev, RequestRecord& r, StreamState& st, bool keep_text) {
  if (ev.contains("error")) {
    st.saw_error = true;
    st.error = ev["error"].is_object() ? ev["error"].value("message", ev["error"].dump()) : ev["error"].dump();
    return false;
  }
  if (auto u = ev.find("usage"); u != ev.end() && u->is_object()) read_openai_usage(*u, r);
  if (auto t = ev.find("timings"); t != ev.end() && t->is_object() && r.cached_tokens < 0)
    r.cached_tokens = int_or(*t, "cache_n", -1);  // llama.cpp's server
  bool has_text = false;
  if (auto choices = ev.find("choices"); choices != ev.end() && choices->is_array()) {
    for (const json& choice : *choices) {
      if (auto fr = choice.find("finish_reason"); fr != choice.end() && fr->is_string()) {
        st.saw_finish = true;
        r.finish_reason = fr->get<std::string>();
      }
      auto delta = choice.find("delta");
      if (delta == choice.end() || !delta->is_object()) continue;
      for (const char* key : {"content", "reasoning_content", "reasoning"}) {
        if (nonempty_string(*delta, key)) {
          has_text = true;
          if (keep_text && std::string_view(key) == "content") r.text += (*delta)[key].get<std::string>();
        }
      }
      if (auto tc = delta->find("tool_calls"); tc != delta->end() && tc->is_array() && !tc->empty()) has_text = true;
    }
  }
  return has_text;
}

// One Anthropic event. Prompt tokens are input + cache read + cache creation.
bool on_anthropic_event(const json& ev, RequestRecord& r, StreamState& st, bool keep_text, int64_t (&input)[3]) {
  const std::string type = ev.value("type", "");
  auto read_usage = [&](const json& u) {
    input[0] = int_or(u, "input_tokens", input[0]);
    input[1] = int_or(u, "cache_read_input_tokens", input[1]);
    input[2] = int_or(u, "cache_creation_input_tokens", input[2]);
    r.prompt_tokens = input[0] + input[1] + input[2];
    if (u.contains("cache_read_input_tokens")) r.cached_tokens = input[1];
    r.completion_tokens = int_or(u, "output_tokens", r.completion_tokens);
  };
  if (type == "error") {
    st.saw_error = true;
    st.error = ev.contains("error") ? ev["error"].value("message", ev["error"].dump()) : ev.dump();
  } else if (type == "message_start") {
    if (ev.contains("message") && ev["message"].contains("usage")) read_usage(ev["message"]["usage"]);
  } else if (type == "message_delta") {
    if (ev.contains("usage")) read_usage(ev["usage"]);
    if (ev.contains("delta") && ev["delta"].contains("stop_reason") && ev["delta"]["stop_reason"].is_string()) {
      st.saw_finish = true;
      r.finish_reason = ev["delta"]["stop_reason"].get<std::string>();
    }
  } else if (type == "message_stop") {
    st.saw_done = true;
  } else if (type == "content_block_delta" && ev.contains("delta")) {
    const json& d = ev["delta"];
    for (const char* key : {"text", "thinking", "partial_json"}) {
      if (nonempty_string(d, key)) {
        if (keep_text && std::string_view(key) == "text") r.text += d[key].get<std::string>();
        return true;
      }
    }
  }
  return false;
}

}  // namespace

ServerClient::ServerClient(ClientOptions options) : options_(std::move(options)) {
  options_.url = base_url(options_.url);
  http_ = std::make_unique<httplib::Client>(options_.url);
  const auto whole = static_cast<time_t>(options_.timeout_s);
  const auto micros = static_cast<time_t>((options_.timeout_s - static_cast<double>(whole)) * 1e6);
  http_->set_connection_timeout(whole, micros);
  http_->set_read_timeout(whole, micros);
  http_->set_write_timeout(whole, micros);
  // A fresh connection per request: a kept-alive socket the server closed while idle fails the
  // next request with a read error that says nothing about the server under test.
  http_->set_keep_alive(false);
  if (!options_.api_key.empty()) {
    http_->set_default_headers({{"Authorization", "Bearer " + options_.api_key}, {"x-api-key", options_.api_key}});
  }
}

ServerClient::~ServerClient() = default;

std::string ServerClient::path() const {
  return options_.api == ApiKind::anthropic_messages ? "/v1/messages" : "/v1/chat/completions";
}

json ServerClient::request_body(const GenerationRequest& request) const {
  json body = {{"model", options_.model}, {"max_tokens", request.max_tokens}, {"stream", true}, {"temperature", 0}};
  if (options_.api == ApiKind::anthropic_messages) {
    json messages = json::array();
    for (const json& m : request.messages) {
      if (m.value("role", "") == "system")
        body["system"] = m["content"];
      else
        messages.push_back(m);
    }
    body["messages"] = std::move(messages);
  } else {
    body["messages"] = request.messages;
    body["stream_options"] = {{"include_usage", true}};
  }
  if (options_.exact_output && request.force_output_length) {
    body["ignore_eos"] = true;
    body["min_tokens"] = request.max_tokens;
  }
  return body;
}

void ServerClient::generate(const GenerationRequest& request, RequestRecord& r, Clock::time_point run_start,
                            const std::atomic<bool>* stop) {
  const bool anthropic = options_.api == ApiKind::anthropic_messages;
  // Asked for an exact length: checked against usage even when the fields are not sent
  // (--no-exact-output), so an early stop shows as a length difference.
  if (r.expected_output_tokens < 0 && request.force_output_length) r.expected_output_tokens = request.max_tokens;
  httplib::Request req;
  req.method = "POST";
  req.path = path();
  req.headers = {{"Content-Type", "application/json"}, {"Accept", "text/event-stream"}};
  if (anthropic) req.headers.emplace("anthropic-version", "2023-06-01");
  req.body = json_line(request_body(request));

  SseParser parser;
  StreamState st;
  std::string error_body;  // the body of a non-200 answer, for the message
  int64_t anthropic_input[3] = {0, 0, 0};
  int status = 0;
  bool stopped = false;
  req.response_handler = [&](const httplib::Response& res) {
    status = res.status;
    return true;
  };
  const Clock::time_point send = Clock::now();
  r.send_s = std::chrono::duration<double>(send - run_start).count();
  req.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    if (stop != nullptr && stop->load()) {
      stopped = true;
      return false;
    }
    if (status != 200) {
      if (error_body.size() < 2000) error_body.append(data, size);
      return true;
    }
    const double now_s = seconds_since(send);
    parser.feed(std::string_view(data, size), [&](std::string_view payload) {
      if (payload == "[DONE]") {
        st.saw_done = true;
        return;
      }
      json ev = json::parse(payload, nullptr, /*allow_exceptions=*/false);
      if (ev.is_discarded()) {
        st.saw_error = true;
        st.error = "unparseable SSE event: " + std::string(payload.substr(0, 200));
        return;
      }
      const bool had_finish = st.saw_finish;
      const bool text = anthropic ? on_anthropic_event(ev, r, st, request.keep_text, anthropic_input)
                                  : on_openai_event(ev, r, st, request.keep_text);
      if (text) {
        r.chunk_s.push_back(now_s);
        if (r.first_token_s < 0) r.first_token_s = now_s;
      } else if (!had_finish && st.saw_finish && r.first_token_s < 0) {
        // Tokens that produced no text (a lone special token): the finish is the first sign of output.
        r.first_token_s = now_s;
      }
    });
    return true;
  };
  httplib::Result result = http_->send(req);
  r.end_s = seconds_since(send);
  r.http_status = status;
  if (stopped || (stop != nullptr && stop->load() && !result)) {
    r.cancelled = true;
    r.ok = false;
    r.error = "stopped (Ctrl-C)";
    return;
  }
  if (!result) {
    r.ok = false;
    r.error = "HTTP: " + httplib::to_string(result.error());
    if (r.end_s >= options_.timeout_s * 0.99)
      r.error += fmt::format(" after {:.1f} s (the per-request --timeout is {} s)", r.end_s, options_.timeout_s);
    return;
  }
  if (status != 200) {
    r.ok = false;
    r.error = "HTTP " + std::to_string(status) + ": " + error_body.substr(0, 400);
    return;
  }
  if (st.saw_error) {
    r.ok = false;
    r.error = st.error;
    return;
  }
  if (!st.saw_done && !st.saw_finish) {
    r.ok = false;
    r.error = "stream ended without a finish";
    return;
  }
  r.ok = true;
}

void ServerClient::abort() { http_->stop(); }

std::string ServerClient::metrics_text() {
  httplib::Result res = http_->Get("/metrics");
  return res && res->status == 200 ? res->body : "";
}

json ServerClient::models() {
  httplib::Result res = http_->Get("/v1/models");
  if (!res || res->status != 200) return json();
  json j = json::parse(res->body, nullptr, false);
  return j.is_discarded() ? json() : j;
}

int64_t ServerClient::context_limit(const json& models) {
  if (!models.is_object() || !models.contains("data") || !models["data"].is_array() || models["data"].empty())
    return -1;
  const json& m = models["data"][0];
  for (const char* key : {"max_model_len", "context_length", "context_window"})
    if (m.contains(key) && m[key].is_number()) return m[key].get<int64_t>();
  if (m.contains("meta") && m["meta"].is_object()) {  // llama.cpp
    const json& meta = m["meta"];
    if (meta.contains("n_ctx") && meta["n_ctx"].is_number()) return meta["n_ctx"].get<int64_t>();
    if (meta.contains("n_ctx_train") && meta["n_ctx_train"].is_number()) return meta["n_ctx_train"].get<int64_t>();
  }
  return -1;
}

std::string ServerClient::flush_prefix_cache() {
  for (const char* endpoint : {"/flush_cache", "/reset_prefix_cache"}) {
    httplib::Result res = http_->Post(endpoint, "{}", "application/json");
    if (res && res->status >= 200 && res->status < 300) return endpoint;
  }
  return "";
}

}  // namespace llmesh::bench
