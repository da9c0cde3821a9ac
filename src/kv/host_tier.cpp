#include "kv/host_tier.h"

#include <algorithm>

namespace llmesh::kv {

void HostTier::put(BlockRecord record, const std::function<void(BlockRecord&&)>& on_drop) {
  if (record.num_bytes() > budget_bytes_) {
    ++num_evictions_;
    if (on_drop) on_drop(std::move(record));
    return;
  }
  if (auto it = entries_.find(record.hash); it != entries_.end()) {  // a newer copy replaces the old one
    num_bytes_ -= it->second->num_bytes();
    lru_.erase(it->second);
    entries_.erase(it);
  }
  while (num_bytes_ + record.num_bytes() > budget_bytes_) {
    BlockRecord oldest = std::move(lru_.front());
    lru_.pop_front();
    entries_.erase(oldest.hash);
    num_bytes_ -= oldest.num_bytes();
    ++num_evictions_;
    if (on_drop) on_drop(std::move(oldest));
  }
  num_bytes_ += record.num_bytes();
  const BlockHash hash = record.hash;
  lru_.push_back(std::move(record));
  entries_[hash] = std::prev(lru_.end());
}

bool HostTier::contains(BlockHash hash, std::span<const int32_t> tokens) const {
  auto it = entries_.find(hash);
  return it != entries_.end() && std::equal(it->second->tokens.begin(), it->second->tokens.end(), tokens.begin(),
                                            tokens.end());
}

std::optional<BlockRecord> HostTier::take(BlockHash hash, std::span<const int32_t> tokens) {
  if (!contains(hash, tokens)) return std::nullopt;
  auto it = entries_.find(hash);
  BlockRecord record = std::move(*it->second);
  lru_.erase(it->second);
  entries_.erase(it);
  num_bytes_ -= record.num_bytes();
  return record;
}

int64_t HostTier::clear() {
  const int64_t n = num_blocks();
  lru_.clear();
  entries_.clear();
  num_bytes_ = 0;
  return n;
}

}  // namespace llmesh::kv
