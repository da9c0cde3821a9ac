#include "kv/host_tier.h"

#include <algorithm>

namespace llmesh::kv {

void HostTier::erase(std::unordered_map<BlockHash, Entry>::iterator e) {
  num_bytes_ -= e->second.it->num_bytes();
  e->second.list->erase(e->second.it);
  entries_.erase(e);
}

void HostTier::put(BlockRecord record, int64_t now_ms, const std::function<void(BlockRecord&&)>& on_drop) {
  if (record.num_bytes() > budget_bytes_) {
    ++num_evictions_;
    if (on_drop) on_drop(std::move(record));
    return;
  }
  if (auto e = entries_.find(record.hash); e != entries_.end()) erase(e);  // a newer copy replaces the old one
  // Pins that lapsed are ordinary blocks again, and the oldest of them.
  if (now_ms >= next_pin_expiry_ms_) {
    next_pin_expiry_ms_ = INT64_MAX;
    for (auto it = pinned_.begin(); it != pinned_.end();) {
      auto next = std::next(it);
      if (it->pinned_until_ms <= now_ms) {
        it->pinned_until_ms = 0;
        lru_.splice(lru_.begin(), pinned_, it);
        entries_[lru_.front().hash] = Entry{&lru_, lru_.begin()};
      } else {
        next_pin_expiry_ms_ = std::min(next_pin_expiry_ms_, it->pinned_until_ms);
      }
      it = next;
    }
  }
  while (num_bytes_ + record.num_bytes() > budget_bytes_) {
    Lru& from = lru_.empty() ? pinned_ : lru_;
    num_bytes_ -= from.front().num_bytes();
    entries_.erase(from.front().hash);
    BlockRecord oldest = std::move(from.front());
    from.pop_front();
    ++num_evictions_;
    if (on_drop) on_drop(std::move(oldest));
  }
  num_bytes_ += record.num_bytes();
  const BlockHash hash = record.hash;
  Lru& to = record.pinned_until_ms > now_ms ? pinned_ : lru_;
  if (&to == &pinned_) next_pin_expiry_ms_ = std::min(next_pin_expiry_ms_, record.pinned_until_ms);
  to.push_back(std::move(record));
  entries_[hash] = Entry{&to, std::prev(to.end())};
}

bool HostTier::contains(BlockHash hash, std::span<const int32_t> tokens) const {
  auto e = entries_.find(hash);
  return e != entries_.end() &&
         std::equal(e->second.it->tokens.begin(), e->second.it->tokens.end(), tokens.begin(), tokens.end());
}

std::optional<BlockRecord> HostTier::take(BlockHash hash, std::span<const int32_t> tokens) {
  if (!contains(hash, tokens)) return std::nullopt;
  auto e = entries_.find(hash);
  BlockRecord record = std::move(*e->second.it);
  num_bytes_ -= record.num_bytes();
  e->second.list->erase(e->second.it);
  entries_.erase(e);
  return record;
}

int64_t HostTier::clear() {
  const int64_t n = num_blocks();
  lru_.clear();
  pinned_.clear();
  entries_.clear();
  num_bytes_ = 0;
  return n;
}

}  // namespace llmesh::kv
