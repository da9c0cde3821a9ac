// KV block ids, their holders, and the prefix cache over them.
//
// Every block is in one of three states:
//   free    — on the free list, no content worth keeping
//   held    — ref_count >= 1: one or more sequences use it
//   cached  — ref_count == 0 but its content is registered under a hash:
//             on the free list too, reusable by a prefix hit until evicted
//
//   allocate():  free|cached -> held   (takes the free list's head; a cached
//                                       block taken this way is evicted, and
//                                       the eviction hook sees it first)
//   share():     held|cached -> held   (a prefix hit; cached blocks leave the free list)
//   release():   held -> held, or -> cached (if hashed) / free when the last holder leaves
//   cache():     held -> held + registered under its hash
//   pin():       a cached block is kept until a deadline (a client's cache_control TTL)
//
// The free list is kept in eviction order: blocks enter at the tail when the
// last holder releases them, so the least recently used cached block is
// evicted first, and never-used blocks are handed out before any cached one.
// Cached blocks whose pin has not expired wait on a second list that
// allocate() takes from only when the first is empty: pinned blocks are
// evicted last, never refused (a pin is a preference, not a reservation).
// expire_pins(now) moves blocks whose deadline passed to the free list's
// head: a lapsed promise is the first thing to give up.
//
// A full block's key chains the previous block's key with its tokens
// (h_i = H(h_{i-1}, tokens_i), seeded with a namespace for the model's
// identity), so a key identifies the whole prefix. A hit is re-checked token by
// token, so a hash collision can never serve wrong K/V.
#pragma once

#include <cstddef>
#include <climits>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace llmesh::kv {

using BlockHash = uint64_t;

BlockHash hash_block(BlockHash parent, std::span<const int32_t> tokens);
// A namespace key from arbitrary bytes (e.g. the model's identity).
BlockHash hash_namespace(std::string_view identity);

// A cached block leaving the cache: its id (whose K/V are still intact when
// the hook runs), its key, its parent's key and its tokens.
struct CachedBlockRef {
  int32_t block_id;
  BlockHash hash;
  BlockHash parent;
  std::span<const int32_t> tokens;
  int64_t pinned_until_ms = 0;  // 0: not pinned
};

class BlockPool {
 public:
  BlockPool(int64_t num_blocks, int64_t block_size);

  // Called for every cached block that allocate() evicts or flush() drops,
  // before it is forgotten (a lower tier can copy it out; events can be sent).
  void set_uncache_hook(std::function<void(const CachedBlockRef&)> hook) { on_uncache_ = std::move(hook); }

  int64_t num_blocks() const { return int64_t(blocks_.size()); }
  int64_t block_size() const { return block_size_; }
  // Blocks allocate() can hand out (free plus cached-but-unreferenced, pinned or not).
  int64_t num_free_blocks() const { return num_free_; }
  // Unreferenced cached blocks kept by a pin.
  int64_t num_pinned_blocks() const { return num_pinned_; }
  int64_t num_cached_blocks() const { return int64_t(cached_.size()); }
  int32_t ref_count(int32_t block_id) const { return blocks_[size_t(block_id)].ref_count; }

  // free|cached -> held. Returns -1 when nothing is free.
  int32_t allocate();
  // held|cached -> held.
  void share(int32_t block_id);
  // One holder fewer; at zero the block goes to the free list's tail.
  void release(int32_t block_id);

  // Registers a held, full block's content under `hash` (whose chain continues
  // `parent`). Returns false (a no-op) if the block or the hash is already
  // cached: the first copy stays the cached one.
  bool cache(int32_t block_id, BlockHash hash, BlockHash parent, std::span<const int32_t> tokens);
  // The cached block with this hash and exactly these tokens, or -1.
  int32_t lookup(BlockHash hash, std::span<const int32_t> tokens) const;
  // Forgets every cached block nobody holds; returns how many.
  int64_t flush();

  // Keeps a cached (or held) block until `until_ms` (the later of its pins wins).
  void pin(int32_t block_id, int64_t until_ms);
  // Unpins every block whose deadline is before `now_ms`.
  void expire_pins(int64_t now_ms);

 private:
  struct List {
    int32_t head = -1, tail = -1;
  };
  enum class On : uint8_t { None, Free, Pinned };
  struct Block {
    int32_t ref_count = 0;
    bool hashed = false;
    BlockHash hash = 0, parent = 0;
    std::vector<int32_t> tokens;  // content when hashed, for the token-by-token check
    int64_t pinned_until_ms = 0;
    int32_t prev = -1, next = -1;  // links of the list it is on
    On on = On::None;
  };
  List& list(On on) { return on == On::Pinned ? pinned_ : free_; }
  void push_tail(On on, int32_t id);
  void push_head(On on, int32_t id);
  void unlink(int32_t id);
  void uncache(int32_t id);

  int64_t block_size_;
  std::vector<Block> blocks_;
  List free_, pinned_;
  int64_t num_free_ = 0, num_pinned_ = 0;
  int64_t next_pin_expiry_ms_ = INT64_MAX;  // the earliest deadline on the pinned list (a lower bound)
  std::unordered_map<BlockHash, int32_t> cached_;
  std::function<void(const CachedBlockRef&)> on_uncache_;
};

// The blocks of one sequence, in position order: position p lives in
// block_ids[p / block_size] at offset p % block_size. The leading blocks that
// are registered in the prefix cache also carry their keys.
class BlockTable {
 public:
  explicit BlockTable(int64_t block_size) : block_size_(block_size) {}

  // Grows the table so positions [0, num_tokens) have blocks. Returns false
  // (leaving the table as it was) when the pool runs out.
  bool reserve(BlockPool& pool, int64_t num_tokens);
  // Appends an already-held block (a prefix-cache hit) with its key.
  void append_cached(int32_t block_id, BlockHash hash) {
    block_ids_.push_back(block_id);
    hashes_.push_back(hash);
  }
  // Records the key of the next leading block once it is registered in the cache.
  void add_hash(BlockHash hash) { hashes_.push_back(hash); }
  // Returns every block to the pool and forgets the keys.
  void release_all(BlockPool& pool);

  int64_t slot(int64_t position) const {
    return int64_t(block_ids_[size_t(position / block_size_)]) * block_size_ + position % block_size_;
  }
  const std::vector<int32_t>& block_ids() const { return block_ids_; }
  const std::vector<BlockHash>& hashes() const { return hashes_; }  // keys of the first hashes().size() blocks
  int64_t num_blocks() const { return int64_t(block_ids_.size()); }
  int64_t capacity_tokens() const { return int64_t(block_ids_.size()) * block_size_; }

 private:
  int64_t block_size_;
  std::vector<int32_t> block_ids_;
  std::vector<BlockHash> hashes_;
};

}  // namespace llmesh::kv
