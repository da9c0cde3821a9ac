// Errors returned to API clients, in OpenAI's shape:
//   {"error": {"message": ..., "type": ..., "param": ..., "code": ...}}
// Handlers throw ApiError; the server turns it into the response (status +
// body) and keeps serving.
#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace llmesh::api {

class ApiError : public std::runtime_error {
 public:
  ApiError(int http_status, std::string type, std::string message, std::string param = "", std::string code = "")
      : std::runtime_error(message),
        http_status_(http_status),
        type_(std::move(type)),
        param_(std::move(param)),
        code_(std::move(code)) {}

  int http_status() const { return http_status_; }
  const std::string& type() const { return type_; }
  const std::string& param() const { return param_; }
  const std::string& code() const { return code_; }
  nlohmann::json to_json() const;

 private:
  int http_status_;
  std::string type_;
  std::string param_;
  std::string code_;
};

// The error body for any status (param/code null when empty).
nlohmann::json error_body(std::string_view message, std::string_view type, std::string_view param = "",
                          std::string_view code = "");

// 400 invalid_request_error naming the offending field.
template <typename... Args>
[[noreturn]] void fail_param(const std::string& param, fmt::format_string<Args...> format, Args&&... args) {
  throw ApiError(400, "invalid_request_error", fmt::format(format, std::forward<Args>(args)...), param);
}

}  // namespace llmesh::api
