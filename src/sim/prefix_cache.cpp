#include "sim/prefix_cache.h"

#include <algorithm>

#include "core/error.h"

namespace llmesh::sim {

CachePolicy::Rank LruCachePolicy::rank(const CacheEntry& entry, int, const SessionStatus&) const {
  return {0, entry.last_use_s};
}

CachePolicy::Rank SessionAwareCachePolicy::rank(const CacheEntry& entry, int worker_id,
                                                const SessionStatus& sessions) const {
  if (entry.session_id < 0) return {1, entry.last_use_s};  // shared prefix: only reachable when childless
  if (!sessions.is_live(entry.session_id, entry.epoch)) return {0, entry.last_use_s};
  if (sessions.is_queued_on(entry.session_id, worker_id)) return {2, entry.last_use_s};
  return {1, entry.last_use_s};
}

WorkerCache::WorkerCache(int worker_id, int64_t capacity_tokens, const CachePolicy* policy)
    : worker_id_(worker_id), capacity_tokens_(capacity_tokens), policy_(policy) {}

const CacheEntry* WorkerCache::find(CacheKey key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

CacheEntry* WorkerCache::find_mutable(CacheKey key) {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

int64_t WorkerCache::cached_tokens(CacheKey key) const {
  const CacheEntry* entry = find(key);
  return entry ? entry->tokens : 0;
}

bool WorkerCache::is_evictable(const CacheEntry& entry, const std::vector<CacheKey>& protected_keys) const {
  if (entry.tokens == 0 || entry.num_pins > 0 || entry.num_children_with_tokens > 0) return false;
  return std::find(protected_keys.begin(), protected_keys.end(), entry.key) == protected_keys.end();
}

int64_t WorkerCache::evictable_tokens(const std::vector<CacheKey>& protected_keys) const {
  // Everything unpinned and unprotected can go: a shared prefix whose child is
  // pinned or protected is itself pinned or protected (callers pin and protect
  // a request's shared prefix together with its private entry).
  int64_t held = pinned_tokens_;
  for (CacheKey key : protected_keys) {
    const CacheEntry* entry = find(key);
    if (entry && entry->num_pins == 0) held += entry->tokens;
  }
  return used_tokens_ - held;
}

void WorkerCache::change_tokens(CacheEntry& entry, int64_t tokens) {
  if ((entry.tokens > 0) != (tokens > 0) && entry.parent_key != 0) {
    CacheEntry* parent = find_mutable(entry.parent_key);
    if (parent) parent->num_children_with_tokens += tokens > 0 ? 1 : -1;
  }
  used_tokens_ += tokens - entry.tokens;
  if (entry.num_pins > 0) pinned_tokens_ += tokens - entry.tokens;
  entry.tokens = tokens;
}

void WorkerCache::remove_if_empty(size_t position) {
  CacheEntry& entry = entries_[position];
  if (entry.tokens > 0 || entry.num_pins > 0 || entry.num_children_with_tokens > 0) return;
  index_.erase(entry.key);
  if (position + 1 != entries_.size()) {
    entries_[position] = entries_.back();
    index_[entries_[position].key] = position;
  }
  entries_.pop_back();
}

bool WorkerCache::make_room(int64_t needed_tokens, const std::vector<CacheKey>& protected_keys,
                            const SessionStatus& sessions, std::vector<EvictionRecord>& evicted) {
  int64_t deficit = needed_tokens - free_tokens();
  if (deficit <= 0) return true;
  if (evictable_tokens(protected_keys) < deficit) return false;
  while (deficit > 0) {
    size_t victim = entries_.size();
    CachePolicy::Rank best;
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (!is_evictable(entries_[i], protected_keys)) continue;
      CachePolicy::Rank r = policy_->rank(entries_[i], worker_id_, sessions);
      if (victim == entries_.size() || r < best || (!(best < r) && entries_[i].key < entries_[victim].key)) {
        victim = i;
        best = r;
      }
    }
    check(victim < entries_.size(), "sim: prefix cache accounting error (no victim for {} tokens)", deficit);
    CacheEntry& entry = entries_[victim];
    int64_t take = std::min(entry.tokens, deficit);
    evicted.push_back({entry.key, entry.session_id, entry.epoch, entry.tokens, take});
    change_tokens(entry, entry.tokens - take);
    deficit -= take;
    remove_if_empty(victim);
  }
  return true;
}

void WorkerCache::set_tokens(CacheKey key, int session_id, int epoch, CacheKey parent_key, int64_t tokens,
                             double now_s) {
  CacheEntry* entry = find_mutable(key);
  if (!entry) {
    index_[key] = entries_.size();
    CacheEntry fresh;
    fresh.key = key;
    fresh.session_id = session_id;
    fresh.epoch = epoch;
    fresh.parent_key = parent_key;
    entries_.push_back(fresh);
    entry = &entries_.back();
  }
  check(tokens - entry->tokens <= free_tokens(), "sim: KV over capacity on worker {} ({} + {} > {})", worker_id_,
        used_tokens_, tokens - entry->tokens, capacity_tokens_);
  change_tokens(*entry, tokens);
  entry->last_use_s = now_s;
}

void WorkerCache::pin(CacheKey key) {
  CacheEntry* entry = find_mutable(key);
  check(entry != nullptr, "sim: pin of a missing cache entry");
  if (entry->num_pins++ == 0) pinned_tokens_ += entry->tokens;
}

void WorkerCache::unpin(CacheKey key, double now_s) {
  CacheEntry* entry = find_mutable(key);
  check(entry != nullptr && entry->num_pins > 0, "sim: unpin of an unpinned cache entry");
  if (--entry->num_pins == 0) pinned_tokens_ -= entry->tokens;
  entry->last_use_s = now_s;
  remove_if_empty(index_.at(key));
}

void WorkerCache::touch(CacheKey key, double now_s) {
  if (CacheEntry* entry = find_mutable(key)) entry->last_use_s = now_s;
}

int64_t HostTier::stored_tokens(CacheKey key) const {
  auto it = stored_.find(key);
  return it == stored_.end() ? 0 : it->second.tokens;
}

void HostTier::store(CacheKey key, int64_t tokens, double now_s) {
  if (!enabled()) return;
  tokens = std::min(tokens, capacity_tokens_);
  Stored& slot = stored_[key];
  if (tokens > slot.tokens) {
    used_tokens_ += tokens - slot.tokens;
    slot.tokens = tokens;
  }
  slot.last_use_s = now_s;
  // Trim least recently used copies (other than this one) until it fits.
  while (used_tokens_ > capacity_tokens_) {
    auto victim = stored_.end();
    for (auto it = stored_.begin(); it != stored_.end(); ++it) {
      if (it->first == key) continue;
      if (victim == stored_.end() || it->second.last_use_s < victim->second.last_use_s ||
          (it->second.last_use_s == victim->second.last_use_s && it->first < victim->first)) {
        victim = it;
      }
    }
    if (victim == stored_.end()) break;
    int64_t take = std::min(victim->second.tokens, used_tokens_ - capacity_tokens_);
    victim->second.tokens -= take;
    used_tokens_ -= take;
    if (victim->second.tokens == 0) stored_.erase(victim);
  }
}

}  // namespace llmesh::sim
