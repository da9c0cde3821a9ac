#include "api/ignored_parts.h"

#include <algorithm>
#include <mutex>
#include <set>

#include "core/log.h"

namespace llmesh::api {

void IgnoredParts::add(std::string_view endpoint, std::string kind) {
  if (std::find(kinds_.begin(), kinds_.end(), kind) != kinds_.end()) return;
  {
    // One line per kind, not per request: a client sends the same parts every turn.
    static std::mutex mutex;
    static std::set<std::string> logged;
    std::lock_guard<std::mutex> lock(mutex);
    std::string key = std::string(endpoint) + " " + kind;
    if (logged.insert(key).second) log_info("{}: ignoring {} (not used by this server; logged once)", endpoint, kind);
  }
  kinds_.push_back(std::move(kind));
}

std::string header_list_value(const std::vector<std::string>& entries) {
  constexpr size_t kMaxHeaderBytes = 4096;
  std::string value;
  for (const auto& entry : entries) {
    if (!value.empty()) value += ", ";
    for (unsigned char c : entry) value += (c >= 0x20 && c < 0x7f) ? char(c) : '?';
  }
  if (value.size() > kMaxHeaderBytes) value = value.substr(0, kMaxHeaderBytes - 3) + "...";
  return value;
}

}  // namespace llmesh::api
