// The JSON-lines request log (--log-requests FILE): one object per finished
// request, appended and flushed as the request ends, so `tail -f` follows it
// and a crash loses at most the line being written.
//
//   {"time": "2026-12-01T10:00:00.123Z", "path": "/v1/messages", "model": "...",
//    "session": "9f3c...", "session_source": "anthropic_user_id", "upstream": "a",
//    "reason": "sticky", "retried_from": ["b"], "status": 200, "stream": true,
//    "prompt_tokens": 1234, "cached_tokens": 1200, "output_tokens": 56,
//    "ttft_ms": 83.1, "duration_ms": 1402.7, "error": "...", "client_gone": false,
//    "prompt": {...}}                          <- only with --log-prompts
// The session is logged as a hash (XXH3, 16 hex digits), never the id itself.
#pragma once

#include <cstdio>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

namespace llmesh::route {

class RequestLog {
 public:
  // Opens `path` for appending; Error naming the path when it cannot.
  RequestLog(const std::string& path, bool log_prompts);
  ~RequestLog();
  RequestLog(const RequestLog&) = delete;
  RequestLog& operator=(const RequestLog&) = delete;

  bool log_prompts() const { return log_prompts_; }
  void write(const nlohmann::json& record);

 private:
  std::FILE* file_;
  bool log_prompts_;
  std::mutex mu_;
};

// UTC now as "YYYY-MM-DDTHH:MM:SS.mmmZ".
std::string utc_timestamp_now();

}  // namespace llmesh::route
