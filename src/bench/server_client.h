// The only way bench talks to a server: HTTP through cpp-httplib's client.
// One ServerClient per thread (it keeps one connection alive). Speaks OpenAI
// chat completions (llmesh, vLLM, SGLang, llama.cpp) or Anthropic messages.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "bench/request_record.h"

namespace httplib {
class Client;
}

namespace llmesh::bench {

using Clock = std::chrono::steady_clock;

enum class ApiKind { openai_chat, anthropic_messages };

struct ClientOptions {
  std::string url;  // http://host:port (a trailing /v1 is accepted and dropped)
  std::string model;
  ApiKind api = ApiKind::openai_chat;
  std::string api_key;       // sent as Bearer and x-api-key when set
  double timeout_s = 600;    // per request: connect, and every read
  bool exact_output = true;  // send ignore_eos + min_tokens so outputs have exactly max_tokens tokens
};

struct GenerationRequest {
  nlohmann::json messages;  // [{role, content}] in OpenAI form; a leading system message becomes
                            // Anthropic's `system`
  int64_t max_tokens = 1;
  bool force_output_length = true;  // with ClientOptions::exact_output: ignore_eos + min_tokens
  bool keep_text = false;           // keep the generated text in the record
};

class ServerClient {
 public:
  explicit ServerClient(ClientOptions options);
  ~ServerClient();

  // Streams one generation and fills the record's times (send_s from
  // `run_start`), usage, ok/http_status/error, finish_reason and text.
  // Never throws for server trouble: failures are recorded. When `stop` turns
  // true mid-stream the request is abandoned and marked cancelled.
  void generate(const GenerationRequest& request, RequestRecord& record, Clock::time_point run_start,
                const std::atomic<bool>* stop = nullptr);

  // GET /metrics (Prometheus text); "" when unavailable.
  std::string metrics_text();
  // GET /v1/models; null json when unavailable.
  nlohmann::json models();
  // The server's context limit from /v1/models (max_model_len, or
  // context_length / n_ctx where other servers put it); -1 when unknown.
  static int64_t context_limit(const nlohmann::json& models);

  // Drops the server's prefix cache: POST /flush_cache (llmesh, SGLang), then
  // /reset_prefix_cache (vLLM). Returns the endpoint that answered 2xx, or ""
  // when none did (callers then rely on unique prompts only).
  std::string flush_prefix_cache();

  // Closes the connection from another thread: an in-flight generate()
  // returns at once (used for Ctrl-C, where a long prefill may not send
  // anything for minutes).
  void abort();

  const ClientOptions& options() const { return options_; }

 private:
  nlohmann::json request_body(const GenerationRequest& request) const;
  std::string path() const;

  ClientOptions options_;
  std::unique_ptr<httplib::Client> http_;
};

// Incremental parser of an SSE body: feed bytes, get one callback per
// `data:` payload (the "[DONE]" sentinel included). Exposed for tests.
class SseParser {
 public:
  template <typename OnData>
  void feed(std::string_view bytes, OnData&& on_data) {
    buffer_.append(bytes);
    size_t line_start = 0;
    for (size_t nl; (nl = buffer_.find('\n', line_start)) != std::string::npos; line_start = nl + 1) {
      std::string_view line(buffer_.data() + line_start, nl - line_start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.starts_with("data:")) {
        line.remove_prefix(5);
        if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
        on_data(line);
      }
    }
    buffer_.erase(0, line_start);
  }

 private:
  std::string buffer_;
};

}  // namespace llmesh::bench
