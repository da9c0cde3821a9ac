// Settings of the HTTP front end (the engine has its own EngineOptions).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace llmesh::api {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                          // 0: any free port (see ApiServer::bind)
  std::string served_model_name;            // the id clients send as "model"
  std::vector<std::string> api_keys;        // none (and no key file): no authentication (api_keys.h)
  std::string api_key_file;
  std::vector<std::string> cors_origins;    // none: no CORS headers (cors_policy.h)
  std::string access_log_path;              // "": no access log (access_log.h)
  std::string tls_cert_file, tls_key_file;  // both: HTTPS only
  size_t max_body_bytes = 16u << 20;        // larger bodies get 413
  size_t max_header_bytes = 64u << 10;      // larger request heads get 431
  double request_read_timeout_s = 60;       // a request's head and body must arrive within this (else 408)
  int num_http_threads = 64;                // each open connection holds one (http_listener.h); serve: 0 = auto
  int64_t context_tokens = 0;               // 0: the engine's context length
  // The loop guard (engine/repetition_guard.h): a generation whose last
  // loop_guard_tokens tokens repeat a span of at most loop_guard_max_period
  // tokens ends. On by default for chat, messages and responses, off for
  // completions; a request's `loop_guard` overrides. 0 in either: off by default.
  int64_t loop_guard_tokens = 256;
  int32_t loop_guard_max_period = 64;
  // The console (docs/console.md).
  size_t console_requests = 256;  // finished requests its ring keeps
  std::string models_dir;         // "": no model library
};

}  // namespace llmesh::api
