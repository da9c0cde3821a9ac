#include "api/api_error.h"

namespace llmesh::api {

nlohmann::json error_body(std::string_view message, std::string_view type, std::string_view param,
                          std::string_view code) {
  nlohmann::json error = {{"message", message}, {"type", type}, {"param", nullptr}, {"code", nullptr}};
  if (!param.empty()) error["param"] = param;
  if (!code.empty()) error["code"] = code;
  return {{"error", error}};
}

nlohmann::json ApiError::to_json() const { return error_body(what(), type_, param_, code_); }

}  // namespace llmesh::api
