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
};

}  // namespace llmesh::api
