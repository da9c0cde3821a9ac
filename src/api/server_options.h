// Settings of the HTTP front end (the engine has its own EngineOptions).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace llmesh::api {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                          // 0: any free port (see ApiServer::bind)
  std::string served_model_name;            // the id clients send as "model"
  std::string api_key;                      // "": no authentication
  size_t max_body_bytes = 16u << 20;        // larger bodies get 413
  int num_http_threads = 64;                // each open stream holds one
  int64_t context_tokens = 0;               // 0: the engine's context length
  // The loop guard (engine/repetition_guard.h): a generation whose last
  // loop_guard_tokens tokens repeat a span of at most loop_guard_max_period
  // tokens ends. On by default for chat, messages and responses, off for
  // completions; a request's `loop_guard` overrides. 0 in either: off by default.
  int64_t loop_guard_tokens = 256;
  int32_t loop_guard_max_period = 64;
};

}  // namespace llmesh::api
