// The host-RAM tier: blocks evicted from the pool, kept by key in LRU order
// within a byte budget. Exclusive of the pool: a promoted block leaves the
// tier (its copy now lives in the pool), and comes back if the pool evicts
// it again, so RAM never holds the same block twice. Pinned blocks (a
// cache_control TTL not yet expired) go only after every unpinned one.
//
// Engine thread only (no locking).
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <list>
#include <optional>
#include <span>
#include <unordered_map>

#include "kv/block_record.h"

namespace llmesh::kv {

class HostTier {
 public:
  explicit HostTier(int64_t budget_bytes) : budget_bytes_(budget_bytes) {}

  // Keeps `record` as the most recently used block; the least recently used
  // ones that no longer fit (unpinned first, or pinned at `now_ms`) are handed
  // to `on_drop` (oldest first) and forgotten. A record larger than the whole
  // budget goes straight to `on_drop`.
  void put(BlockRecord record, int64_t now_ms, const std::function<void(BlockRecord&&)>& on_drop);
  bool contains(BlockHash hash, std::span<const int32_t> tokens) const;
  // Removes and returns the block (a promotion), or nullopt.
  std::optional<BlockRecord> take(BlockHash hash, std::span<const int32_t> tokens);
  // Forgets everything; returns how many blocks.
  int64_t clear();

  int64_t num_blocks() const { return int64_t(entries_.size()); }
  int64_t num_bytes() const { return num_bytes_; }
  int64_t budget_bytes() const { return budget_bytes_; }
  int64_t num_evictions() const { return num_evictions_; }
  int64_t num_pinned() const { return int64_t(pinned_.size()); }

 private:
  using Lru = std::list<BlockRecord>;  // front: least recently used
  struct Entry {
    Lru* list;
    Lru::iterator it;
  };
  void erase(std::unordered_map<BlockHash, Entry>::iterator e);
  int64_t budget_bytes_;
  int64_t num_bytes_ = 0;
  int64_t num_evictions_ = 0;
  Lru lru_, pinned_;
  int64_t next_pin_expiry_ms_ = INT64_MAX;  // the earliest deadline on pinned_ (a lower bound)
  std::unordered_map<BlockHash, Entry> entries_;
};

}  // namespace llmesh::kv
