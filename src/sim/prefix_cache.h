// A worker's KV memory as the simulator sees it: prefix-cache entries counted
// in tokens, not blocks.
//
// Each entry is a chain of tokens with a key: a session's private context
// (everything after the shared prefix) or a shared prefix (system prompt and
// tools) that private entries hang off. As in a radix tree, a shared entry is
// evictable only when no private entry below it holds tokens, and eviction
// trims an entry from its tail, so what remains is still a valid prefix.
// Running requests pin their entries; pinned tokens are never evicted. Used
// tokens (pinned or not) never exceed capacity: callers ask `make_room`
// before growing an entry.
//
// Which entry loses tokens first is a CachePolicy. LruCachePolicy and
// SessionAwareCachePolicy ship; the kv layer's policy can be wrapped in this
// interface later.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace llmesh::sim {

using CacheKey = uint64_t;
inline CacheKey private_cache_key(int session_id, int epoch) {
  return (static_cast<uint64_t>(session_id) << 21 | static_cast<uint64_t>(epoch & 0xFFFFF)) << 1 | 1;
}
inline CacheKey shared_cache_key(uint64_t prefix_id) { return prefix_id << 1; }

struct CacheEntry {
  CacheKey key = 0;
  int session_id = -1;  // -1 for a shared prefix
  int epoch = 0;        // a session's context restarts (new epoch) after compaction
  CacheKey parent_key = 0;  // shared prefix this entry extends; 0 = none
  int64_t tokens = 0;
  double last_use_s = 0;
  int num_pins = 0;
  int num_children_with_tokens = 0;
};

// What a policy may ask about sessions.
class SessionStatus {
 public:
  virtual ~SessionStatus() = default;
  // True while the session will send more turns and `epoch` is its current context.
  virtual bool is_live(int session_id, int epoch) const = 0;
  // True when the session has a request waiting for admission on `worker_id`.
  virtual bool is_queued_on(int session_id, int worker_id) const = 0;
};

class CachePolicy {
 public:
  virtual ~CachePolicy() = default;
  // Lower ranks are evicted first; compared as (class, last use).
  struct Rank {
    int eviction_class = 0;
    double last_use_s = 0;
    bool operator<(const Rank& other) const {
      return eviction_class != other.eviction_class ? eviction_class < other.eviction_class
                                                    : last_use_s < other.last_use_s;
    }
  };
  virtual Rank rank(const CacheEntry& entry, int worker_id, const SessionStatus& sessions) const = 0;
};

// Least recently used first.
class LruCachePolicy : public CachePolicy {
 public:
  Rank rank(const CacheEntry& entry, int worker_id, const SessionStatus& sessions) const override;
};

// Finished sessions and stale epochs first, then live sessions not queued
// here, then sessions whose next request waits on this worker; LRU within.
class SessionAwareCachePolicy : public CachePolicy {
 public:
  Rank rank(const CacheEntry& entry, int worker_id, const SessionStatus& sessions) const override;
};

// One eviction decision, reported so the simulator can count evictions of
// live sessions and copy evicted tokens to the host tier.
struct EvictionRecord {
  CacheKey key = 0;
  int session_id = -1;
  int epoch = 0;
  int64_t tokens_before = 0;
  int64_t tokens_evicted = 0;
};

class WorkerCache {
 public:
  WorkerCache(int worker_id, int64_t capacity_tokens, const CachePolicy* policy);

  int64_t capacity_tokens() const { return capacity_tokens_; }
  int64_t used_tokens() const { return used_tokens_; }
  int64_t free_tokens() const { return capacity_tokens_ - used_tokens_; }
  int64_t cached_tokens(CacheKey key) const;
  const CacheEntry* find(CacheKey key) const;

  // Tokens that make_room could free without touching `protected_keys`.
  int64_t evictable_tokens(const std::vector<CacheKey>& protected_keys) const;

  // Evicts until `needed_tokens` are free; returns false (evicting nothing)
  // when that is impossible. Appends what it evicted to `evicted`.
  bool make_room(int64_t needed_tokens, const std::vector<CacheKey>& protected_keys, const SessionStatus& sessions,
                 std::vector<EvictionRecord>& evicted);

  // Sets an entry's length (creating it); growth must fit in free_tokens().
  void set_tokens(CacheKey key, int session_id, int epoch, CacheKey parent_key, int64_t tokens, double now_s);
  void pin(CacheKey key);
  void unpin(CacheKey key, double now_s);
  void touch(CacheKey key, double now_s);

  const std::vector<CacheEntry>& entries() const { return entries_; }

 private:
  CacheEntry* find_mutable(CacheKey key);
  bool is_evictable(const CacheEntry& entry, const std::vector<CacheKey>& protected_keys) const;
  void change_tokens(CacheEntry& entry, int64_t tokens);
  void remove_if_empty(size_t index);

  int worker_id_;
  int64_t capacity_tokens_;
  int64_t used_tokens_ = 0;
  int64_t pinned_tokens_ = 0;  // tokens of entries with num_pins > 0
  const CachePolicy* policy_;
  std::vector<CacheEntry> entries_;
  std::unordered_map<CacheKey, size_t> index_;  // key -> position in entries_
};

// Host-memory (or disk) tier behind one worker: a copy of evicted private
// context, restored over PCIe instead of recomputed. LRU, trimmed from the tail.
class HostTier {
 public:
  explicit HostTier(int64_t capacity_tokens) : capacity_tokens_(capacity_tokens) {}
  bool enabled() const { return capacity_tokens_ > 0; }
  int64_t stored_tokens(CacheKey key) const;
  // Records that the first `tokens` of `key` are now held here.
  void store(CacheKey key, int64_t tokens, double now_s);
  int64_t used_tokens() const { return used_tokens_; }

 private:
  struct Stored {
    int64_t tokens = 0;
    double last_use_s = 0;
  };
  int64_t capacity_tokens_;
  int64_t used_tokens_ = 0;
  std::unordered_map<CacheKey, Stored> stored_;
};

}  // namespace llmesh::sim
