#include "api/stop_string_matcher.h"

#include <algorithm>

namespace llmesh::api {

StopStringMatcher::StopStringMatcher(std::vector<std::string> stop_strings) {
  for (auto& s : stop_strings) {
    if (!s.empty()) stop_strings_.push_back(std::move(s));
  }
}

std::string StopStringMatcher::push(std::string_view text) {
  if (stopped_) return "";
  pending_.append(text);

  // The earliest occurrence wins (ties: the longer string, so nothing of it leaks).
  size_t best_pos = std::string::npos;
  for (const auto& stop : stop_strings_) {
    const size_t pos = pending_.find(stop);
    if (pos < best_pos || (pos == best_pos && pos != std::string::npos && stop.size() > matched_.size())) {
      best_pos = pos;
      matched_ = stop;
    }
  }
  if (best_pos != std::string::npos) {
    stopped_ = true;
    std::string out = pending_.substr(0, best_pos);
    pending_.clear();
    return out;
  }

  // Hold back the longest tail that is a proper prefix of some stop string.
  size_t keep = 0;
  for (const auto& stop : stop_strings_) {
    const size_t max_len = std::min(pending_.size(), stop.size() - 1);
    for (size_t len = max_len; len > keep; --len) {
      if (std::string_view(pending_).substr(pending_.size() - len) == std::string_view(stop).substr(0, len)) {
        keep = len;
        break;
      }
    }
  }
  std::string out = pending_.substr(0, pending_.size() - keep);
  pending_.erase(0, pending_.size() - keep);
  return out;
}

std::string StopStringMatcher::flush() {
  std::string out;
  if (!stopped_) out.swap(pending_);
  pending_.clear();
  return out;
}

}  // namespace llmesh::api
