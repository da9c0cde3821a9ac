#include "api/cors_policy.h"

#include <algorithm>

namespace llmesh::api {

bool CorsPolicy::allows(const std::string& origin) const {
  if (origin.empty()) return false;
  return std::any_of(origins_.begin(), origins_.end(), [&](const std::string& o) { return o == "*" || o == origin; });
}

bool CorsPolicy::is_preflight(const httplib::Request& req) {
  return req.method == "OPTIONS" && req.has_header("Access-Control-Request-Method");
}

void CorsPolicy::apply(const httplib::Request& req, httplib::Response& res) const {
  const std::string origin = req.get_header_value("Origin");
  res.set_header("Vary", "Origin");
  if (is_preflight(req)) res.status = 204;
  if (!enabled() || !allows(origin)) return;
  res.set_header("Access-Control-Allow-Origin", origin);
  if (is_preflight(req)) {
    res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
    const std::string asked = req.get_header_value("Access-Control-Request-Headers");
    res.set_header("Access-Control-Allow-Headers",
                   asked.empty() ? "authorization, content-type, x-api-key, anthropic-version" : asked);
    res.set_header("Access-Control-Max-Age", "600");
  } else {
    res.set_header("Access-Control-Expose-Headers",
                   "request-id, x-request-id, retry-after, x-llmesh-ignored-request-parts, "
                   "x-llmesh-unenforced-schema-keywords");
  }
}

}  // namespace llmesh::api
