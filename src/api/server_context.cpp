#include "api/server_context.h"

#include <random>

#include "api/api_error.h"

namespace llmesh::api {

int64_t ServerContext::context_tokens() const {
  const int64_t engine_limit = engine ? engine->context_tokens() : 0;
  if (options.context_tokens > 0 && (engine_limit <= 0 || options.context_tokens < engine_limit)) {
    return options.context_tokens;
  }
  return engine_limit;
}

void ServerContext::check_model_name(const std::string& requested) const {
  if (requested.empty() || requested == options.served_model_name) return;
  throw ApiError(404, "invalid_request_error",
                 fmt::format("The model '{}' does not exist; this server serves '{}'", requested,
                             options.served_model_name),
                 "model", "model_not_found");
}

std::string make_request_id(const std::string& prefix) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{}{:016x}{:08x}", prefix, rng(), uint32_t(rng()));
}

}  // namespace llmesh::api
