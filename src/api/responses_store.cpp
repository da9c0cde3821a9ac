#include "api/responses_store.h"

namespace llmesh::api {

ResponseStore::ResponseStore(size_t max_entries, size_t max_bytes) : max_entries_(max_entries), max_bytes_(max_bytes) {}

void ResponseStore::put(const std::string& response_id, nlohmann::json conversation_items) {
  const size_t num_bytes = conversation_items.dump().size();
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = entries_.find(response_id); it != entries_.end()) {
    num_bytes_ -= it->second.num_bytes;
    lru_.erase(it->second.lru_position);
    entries_.erase(it);
  }
  if (num_bytes > max_bytes_) return;
  lru_.push_front(response_id);
  entries_[response_id] = Entry{std::move(conversation_items), num_bytes, lru_.begin()};
  num_bytes_ += num_bytes;
  evict_until_within_limits();
}

std::optional<nlohmann::json> ResponseStore::get(const std::string& response_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(response_id);
  if (it == entries_.end()) return std::nullopt;
  lru_.splice(lru_.begin(), lru_, it->second.lru_position);  // now the most recently used
  return it->second.items;
}

size_t ResponseStore::num_entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

size_t ResponseStore::num_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return num_bytes_;
}

void ResponseStore::evict_until_within_limits() {
  while (!lru_.empty() && (entries_.size() > max_entries_ || num_bytes_ > max_bytes_)) {
    auto it = entries_.find(lru_.back());
    num_bytes_ -= it->second.num_bytes;
    entries_.erase(it);
    lru_.pop_back();
  }
}

ResponseStore& response_store() {
  static ResponseStore store;
  return store;
}

}  // namespace llmesh::api
