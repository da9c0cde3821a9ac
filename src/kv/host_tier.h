// The host-RAM tier: blocks evicted from the pool, kept by key in LRU order
// within a byte budget. Exclusive of the pool: a promoted block leaves the
// tier (its copy now lives in the pool), and comes back if the pool evicts
// it again, so RAM never holds the same block twice.
//
// Engine thread only (no locking).
#pragma once

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
  // ones that no longer fit are handed to `on_drop` (oldest first) and forgotten.
  // A record larger than the whole budget goes straight to `on_drop`.
  void put(BlockRecord record, const std::function<void(BlockRecord&&)>& on_drop);
  bool contains(BlockHash hash, std::span<const int32_t> tokens) const;
  // Removes and returns the block (a promotion), or nullopt.
  std::optional<BlockRecord> take(BlockHash hash, std::span<const int32_t> tokens);
  // Forgets everything; returns how many blocks.
  int64_t clear();

  int64_t num_blocks() const { return int64_t(entries_.size()); }
  int64_t num_bytes() const { return num_bytes_; }
  int64_t budget_bytes() const { return budget_bytes_; }
  int64_t num_evictions() const { return num_evictions_; }

 private:
  using Lru = std::list<BlockRecord>;  // front: least recently used
  int64_t budget_bytes_;
  int64_t num_bytes_ = 0;
  int64_t num_evictions_ = 0;
  Lru lru_;
  std::unordered_map<BlockHash, Lru::iterator> entries_;
};

}  // namespace llmesh::kv
