// The owner of the paged KV cache's bookkeeping: block hashing, prefix
// lookup, allocation, reference counts and eviction. The scheduler asks it
// for blocks and never hashes; the K/V bytes themselves live with the
// executor (KvPool), addressed by the same block ids.
//
//   PrefixMatch m = kv.find_prefix(tokens, max_blocks);   // admission: how much is cached
//   kv.acquire(m, tokens, table);                         // share those blocks (promote lower-tier ones)
//   kv.reserve(table, num_tokens);                        // fresh blocks (may evict)
//   ... the step computes K/V ...
//   kv.cache_full_blocks(table, tokens, num_computed);    // newly full blocks become hits
//   kv.release(table);                                    // finish or preemption
//
// Listeners see every eviction before the block's memory is reused (a lower
// tier can copy it out instead of losing it) and every change of the cache's
// content as events (a router or console can mirror what is cached). A
// LowerTier (kv_tiers.h: host RAM, disk) extends a prefix match past what is
// resident: acquire() loads those blocks into fresh pool blocks.
//
// Keys: a block's key chains its parent's key with its tokens, seeded with
// the namespace (see cache_namespace()), so one key names a whole prefix of
// one model's K/V layout.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "kv/block_pool.h"

namespace llmesh::kv {

// The seed of every chain: what the cached K/V depend on besides the tokens.
// `model_identity` is the weights' content identity (never the file path),
// `kv_dtype` the cache's element type, so a changed file, another block size
// or another KV dtype can never reuse stale K/V.
BlockHash cache_namespace(std::string_view model_identity, std::string_view architecture, int64_t block_size,
                          std::string_view kv_dtype);

struct KvCacheConfig {
  int64_t num_blocks = 0;
  int64_t block_size = 16;
  bool enable_prefix_cache = true;
  BlockHash cache_namespace = 0;
};

// The cached run at the start of a token sequence: resident blocks and, with
// a lower tier, blocks that can be loaded rather than recomputed.
struct PrefixMatch {
  std::vector<BlockHash> hashes;   // keys of the matched full blocks, in order
  std::vector<int32_t> block_ids;  // the pool block of each, or -1 where it is in a lower tier

  int64_t num_blocks() const { return int64_t(hashes.size()); }
  int64_t num_resident() const { return int64_t(std::count_if(block_ids.begin(), block_ids.end(), [](int32_t b) { return b >= 0; })); }
};

enum class KvEventType { BlockStored, BlockRemoved };

// A change of what the cache holds (vLLM-style KV events).
struct KvEvent {
  KvEventType type;
  BlockHash hash = 0;
  BlockHash parent_hash = 0;  // the key of the block before it (the namespace for the first)
  int32_t block_id = -1;
  std::span<const int32_t> tokens;  // the block's tokens (valid during the call)
};

class KvCacheListener {
 public:
  virtual ~KvCacheListener() = default;
  // A cached block is being evicted to make room: its K/V at `block.block_id`
  // are intact until this returns (copy them out to keep them). `now_ms` is
  // the manager's clock (set_clock), the one block.pinned_until_ms is in.
  virtual void on_evict(const CachedBlockRef& block, int64_t now_ms) { (void)block, (void)now_ms; }
  virtual void on_event(const KvEvent& event) { (void)event; }
};

// Blocks below the pool, found by key and tokens (host RAM, disk).
class LowerTier {
 public:
  virtual ~LowerTier() = default;
  virtual bool contains(BlockHash hash, std::span<const int32_t> tokens) const = 0;
  // Copies the block's K/V into pool block `block_id`. False when it is gone
  // or fails its checks (nothing usable was written).
  virtual bool load(BlockHash hash, std::span<const int32_t> tokens, int32_t block_id) = 0;
};

struct KvCacheCounters {
  int64_t evictions = 0;
  int64_t promoted_blocks = 0;      // loaded from a lower tier by acquire()
  int64_t failed_promotions = 0;    // a lower tier said it had a block and then could not load it
};

class KvCacheManager {
 public:
  explicit KvCacheManager(const KvCacheConfig& config);
  KvCacheManager(const KvCacheManager&) = delete;
  KvCacheManager& operator=(const KvCacheManager&) = delete;

  // Not owned; called on the thread that calls the manager (the engine loop).
  void add_listener(KvCacheListener* listener) { listeners_.push_back(listener); }
  // Not owned; nullptr: none.
  void set_lower_tier(LowerTier* tier) { lower_ = tier; }

  // The longest run of cached full blocks at the start of `tokens` (in the
  // pool or a lower tier), at most `max_blocks` long.
  PrefixMatch find_prefix(std::span<const int32_t> tokens, int64_t max_blocks) const;
  // Holds the matched blocks and appends them (and their keys) to an empty
  // `table`; lower-tier blocks get fresh pool blocks (evicting LRU cached
  // ones) and are loaded and registered. Stops at the first block that cannot
  // be had (pool full, load failed). Returns the number of blocks appended.
  int64_t acquire(const PrefixMatch& match, std::span<const int32_t> tokens, BlockTable& table);
  // Grows `table` so positions [0, num_tokens) have blocks, evicting cached
  // blocks as needed. False, with the table unchanged, when the pool is short.
  bool reserve(BlockTable& table, int64_t num_tokens);
  // Registers the table's full blocks among the first `num_computed` tokens of
  // `tokens` (a no-op for those already registered, or with the cache off).
  void cache_full_blocks(BlockTable& table, std::span<const int32_t> tokens, int64_t num_computed);
  // Returns every block of `table` (full registered ones stay cached).
  void release(BlockTable& table);
  // Keeps the table's first `num_blocks` cached blocks for `seconds` (a
  // client's cache_control TTL): evicted only after every unpinned one.
  void pin(const BlockTable& table, int64_t num_blocks, int64_t seconds);
  // The clock pins are measured on (milliseconds; default: steady_clock). For tests.
  void set_clock(std::function<int64_t()> now_ms) { now_ms_ = std::move(now_ms); }
  // Forgets every cached block nobody holds; returns how many.
  int64_t flush();

  const KvCacheConfig& config() const { return config_; }
  int64_t block_size() const { return config_.block_size; }
  int64_t num_blocks() const { return pool_.num_blocks(); }
  int64_t num_free_blocks() const { return pool_.num_free_blocks(); }
  int64_t num_cached_blocks() const { return pool_.num_cached_blocks(); }
  int64_t num_pinned_blocks() const { return pool_.num_pinned_blocks(); }
  int64_t num_evictions() const { return counters_.evictions; }
  const KvCacheCounters& block_counters() const { return counters_; }
  const BlockPool& pool() const { return pool_; }

 private:
  void on_uncache(const CachedBlockRef& block);
  void emit(const KvEvent& event);

  KvCacheConfig config_;
  BlockPool pool_;
  std::vector<KvCacheListener*> listeners_;
  LowerTier* lower_ = nullptr;
  std::function<int64_t()> now_ms_;
  bool flushing_ = false;
  KvCacheCounters counters_;
};

}  // namespace llmesh::kv
