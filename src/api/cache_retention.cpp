#include "api/cache_retention.h"

#include <algorithm>
#include <string>

#include "api/api_error.h"

namespace llmesh::api {

namespace {

using OJson = nlohmann::ordered_json;

int64_t ttl_of(const OJson& holder, const std::string& where) {
  if (!holder.is_object()) return 0;
  auto cc = holder.find("cache_control");
  if (cc == holder.end() || cc->is_null()) return 0;
  if (!cc->is_object()) fail_param(where + ".cache_control", "{}.cache_control: must be an object", where);
  auto ttl = cc->find("ttl");
  if (ttl == cc->end() || ttl->is_null()) return kCacheTtlDefaultSeconds;
  if (*ttl == "5m") return kCacheTtlDefaultSeconds;
  if (*ttl == "1h") return kCacheTtlLongSeconds;
  fail_param(where + ".cache_control.ttl", "{}.cache_control.ttl: Input should be '5m' or '1h'", where);
}

int64_t max_ttl_of_blocks(const OJson& blocks, const std::string& where) {
  int64_t ttl = 0;
  if (!blocks.is_array()) return 0;
  for (size_t i = 0; i < blocks.size(); ++i) ttl = std::max(ttl, ttl_of(blocks[i], where + "." + std::to_string(i)));
  return ttl;
}

}  // namespace

int64_t anthropic_cache_ttl_seconds(const OJson& body) {
  int64_t ttl = ttl_of(body, "body");
  if (auto system = body.find("system"); system != body.end()) ttl = std::max(ttl, max_ttl_of_blocks(*system, "system"));
  if (auto tools = body.find("tools"); tools != body.end()) ttl = std::max(ttl, max_ttl_of_blocks(*tools, "tools"));
  if (auto messages = body.find("messages"); messages != body.end() && messages->is_array()) {
    for (size_t i = 0; i < messages->size(); ++i) {
      const OJson& m = (*messages)[i];
      if (m.is_object() && m.contains("content"))
        ttl = std::max(ttl, max_ttl_of_blocks(m["content"], "messages." + std::to_string(i) + ".content"));
    }
  }
  return ttl;
}

}  // namespace llmesh::api
