#include "api/anthropic_error.h"

namespace llmesh::api {

bool is_anthropic_path(std::string_view path) {
  constexpr std::string_view kPrefix = "/v1/messages";
  if (path.substr(0, kPrefix.size()) != kPrefix) return false;
  return path.size() == kPrefix.size() || path[kPrefix.size()] == '/' || path[kPrefix.size()] == '?';
}

std::string_view anthropic_error_type(int http_status) {
  switch (http_status) {
    case 400:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
    case 529:
      return "overloaded_error";
    default:
      return http_status >= 500 ? "api_error" : "invalid_request_error";
  }
}

nlohmann::json anthropic_error_body(int http_status, std::string_view message) {
  return {{"type", "error"}, {"error", {{"type", anthropic_error_type(http_status)}, {"message", message}}}};
}

}  // namespace llmesh::api
