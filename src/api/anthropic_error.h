// Errors on the Anthropic Messages endpoints, in Anthropic's shape:
//   {"type": "error", "error": {"type": "invalid_request_error", "message": ...}}
// The official SDK maps the HTTP status to its error class and shows the
// message; Claude Code retries 429/5xx and reports the rest.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace llmesh::api {

// True for /v1/messages and everything under it (count_tokens, unknown subpaths):
// their errors take Anthropic's shape, every other path keeps OpenAI's.
bool is_anthropic_path(std::string_view path);

// The Anthropic error type for an HTTP status: 400 invalid_request_error,
// 401 authentication_error, 403 permission_error, 404 not_found_error,
// 413 request_too_large, 429 rate_limit_error, 503/529 overloaded_error, other 5xx api_error.
std::string_view anthropic_error_type(int http_status);

// {"type": "error", "error": {"type": anthropic_error_type(status), "message": message}}
nlohmann::json anthropic_error_body(int http_status, std::string_view message);

}  // namespace llmesh::api
