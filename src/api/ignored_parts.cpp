#include "api/ignored_parts.h"

#include <algorithm>
#include <mutex>
#include <set>

#include "core/log.h"

namespace llmesh::api {

namespace {

// Names come from the client: printable ASCII only (no forged log lines), bounded.
std::string printable(std::string_view text) {
  constexpr size_t kMaxKindBytes = 96;
  std::string out;
  for (unsigned char c : text.substr(0, kMaxKindBytes)) out += (c >= 0x20 && c < 0x7f) ? char(c) : '?';
  if (text.size() > kMaxKindBytes) out += "...";
  return out;
}

// One line per kind, not per request: a client sends the same parts every turn.
// Bounded, so a client inventing names cannot grow the set (or the log) without end.
void log_once(std::string_view endpoint, const std::string& kind) {
  constexpr size_t kMaxLoggedKinds = 1024;
  static std::mutex mutex;
  static std::set<std::string> logged;
  std::lock_guard<std::mutex> lock(mutex);
  if (logged.size() > kMaxLoggedKinds) return;
  if (logged.size() == kMaxLoggedKinds) {
    logged.insert("");  // the marker that the cap was reached
    log_info("{} kinds of ignored request parts logged; further ones are not (they still get the header)",
             kMaxLoggedKinds);
    return;
  }
  if (logged.insert(std::string(endpoint) + " " + kind).second)
    log_info("{}: ignoring {} (not used by this server; logged once)", endpoint, kind);
}

}  // namespace

void IgnoredParts::add(std::string_view endpoint, std::string_view kind) {
  std::string name = printable(kind);
  if (std::find(kinds_.begin(), kinds_.end(), name) != kinds_.end()) return;
  log_once(endpoint, name);
  kinds_.push_back(std::move(name));
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
