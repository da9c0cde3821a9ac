#include "kv/block_pool.h"

#include <xxhash.h>

#include <algorithm>

#include "core/error.h"

namespace llmesh::kv {

BlockHash hash_block(BlockHash parent, std::span<const int32_t> tokens) {
  // The parent key seeds the hash of this block's tokens: the key covers the whole prefix.
  return XXH3_64bits_withSeed(tokens.data(), tokens.size_bytes(), parent);
}

BlockHash hash_namespace(std::string_view identity) {
  return XXH3_64bits(identity.data(), identity.size());
}

BlockPool::BlockPool(int64_t num_blocks, int64_t block_size)
    : block_size_(block_size), blocks_(static_cast<size_t>(num_blocks)) {
  for (int32_t id = 0; id < int32_t(num_blocks); ++id) push_tail(On::Free, id);
}

void BlockPool::push_tail(On on, int32_t id) {
  Block& b = blocks_[size_t(id)];
  List& l = list(on);
  b.prev = l.tail;
  b.next = -1;
  if (l.tail >= 0) blocks_[size_t(l.tail)].next = id;
  else l.head = id;
  l.tail = id;
  b.on = on;
  ++num_free_;
  if (on == On::Pinned) ++num_pinned_;
}

void BlockPool::push_head(On on, int32_t id) {
  Block& b = blocks_[size_t(id)];
  List& l = list(on);
  b.prev = -1;
  b.next = l.head;
  if (l.head >= 0) blocks_[size_t(l.head)].prev = id;
  else l.tail = id;
  l.head = id;
  b.on = on;
  ++num_free_;
  if (on == On::Pinned) ++num_pinned_;
}

void BlockPool::unlink(int32_t id) {
  Block& b = blocks_[size_t(id)];
  List& l = list(b.on);
  if (b.prev >= 0) blocks_[size_t(b.prev)].next = b.next;
  else l.head = b.next;
  if (b.next >= 0) blocks_[size_t(b.next)].prev = b.prev;
  else l.tail = b.prev;
  b.prev = b.next = -1;
  if (b.on == On::Pinned) --num_pinned_;
  b.on = On::None;
  --num_free_;
}

void BlockPool::uncache(int32_t id) {
  Block& b = blocks_[size_t(id)];
  if (!b.hashed) return;
  auto it = cached_.find(b.hash);
  if (it != cached_.end() && it->second == id) cached_.erase(it);
  if (on_uncache_) on_uncache_({id, b.hash, b.parent, b.tokens, b.pinned_until_ms});
  b.hashed = false;
  b.pinned_until_ms = 0;
  b.tokens.clear();
}

int32_t BlockPool::allocate() {
  const int32_t id = free_.head >= 0 ? free_.head : pinned_.head;
  if (id < 0) return -1;
  unlink(id);
  uncache(id);  // evicted: its old content is about to be overwritten
  blocks_[size_t(id)].ref_count = 1;
  return id;
}

void BlockPool::share(int32_t block_id) {
  Block& b = blocks_[size_t(block_id)];
  if (b.ref_count == 0) {
    check(b.hashed && b.on != On::None, "sharing KV block {} that is neither held nor cached", block_id);
    unlink(block_id);
  }
  ++b.ref_count;
}

void BlockPool::release(int32_t block_id) {
  Block& b = blocks_[size_t(block_id)];
  check(b.ref_count > 0, "releasing KV block {} that nobody holds", block_id);
  if (--b.ref_count > 0) return;
  if (b.hashed && b.pinned_until_ms > 0) {
    push_tail(On::Pinned, block_id);
    next_pin_expiry_ms_ = std::min(next_pin_expiry_ms_, b.pinned_until_ms);
  } else {
    push_tail(On::Free, block_id);
  }
}

bool BlockPool::cache(int32_t block_id, BlockHash hash, BlockHash parent, std::span<const int32_t> tokens) {
  Block& b = blocks_[size_t(block_id)];
  if (b.hashed || cached_.count(hash)) return false;
  b.hashed = true;
  b.hash = hash;
  b.parent = parent;
  b.tokens.assign(tokens.begin(), tokens.end());
  cached_[hash] = block_id;
  return true;
}

int32_t BlockPool::lookup(BlockHash hash, std::span<const int32_t> tokens) const {
  auto it = cached_.find(hash);
  if (it == cached_.end()) return -1;
  const Block& b = blocks_[size_t(it->second)];
  if (!std::equal(b.tokens.begin(), b.tokens.end(), tokens.begin(), tokens.end())) return -1;
  return it->second;
}

int64_t BlockPool::flush() {
  int64_t dropped = 0;
  for (List* l : {&free_, &pinned_}) {
    for (int32_t id = l->head; id >= 0; id = blocks_[size_t(id)].next) {
      if (blocks_[size_t(id)].hashed) {
        uncache(id);
        ++dropped;
      }
    }
  }
  // Pinned blocks that lost their content are plain free blocks now.
  while (pinned_.head >= 0) {
    const int32_t id = pinned_.head;
    unlink(id);
    push_tail(On::Free, id);
  }
  return dropped;
}

void BlockPool::pin(int32_t block_id, int64_t until_ms) {
  Block& b = blocks_[size_t(block_id)];
  if (!b.hashed || until_ms <= b.pinned_until_ms) return;
  b.pinned_until_ms = until_ms;
  next_pin_expiry_ms_ = std::min(next_pin_expiry_ms_, until_ms);
  if (b.on == On::Free) {
    unlink(block_id);
    push_tail(On::Pinned, block_id);
  }
}

void BlockPool::expire_pins(int64_t now_ms) {
  if (now_ms < next_pin_expiry_ms_) return;
  next_pin_expiry_ms_ = INT64_MAX;
  for (int32_t id = pinned_.head; id >= 0;) {
    Block& b = blocks_[size_t(id)];
    const int32_t next = b.next;
    if (b.pinned_until_ms <= now_ms) {
      b.pinned_until_ms = 0;
      unlink(id);
      push_head(On::Free, id);
    } else {
      next_pin_expiry_ms_ = std::min(next_pin_expiry_ms_, b.pinned_until_ms);
    }
    id = next;
  }
}

bool BlockTable::reserve(BlockPool& pool, int64_t num_tokens) {
  const int64_t needed = (num_tokens + block_size_ - 1) / block_size_ - int64_t(block_ids_.size());
  if (needed <= 0) return true;
  if (needed > pool.num_free_blocks()) return false;
  for (int64_t i = 0; i < needed; ++i) block_ids_.push_back(pool.allocate());
  return true;
}

void BlockTable::release_all(BlockPool& pool) {
  // Release in reverse so a sequence's earlier (more shareable) blocks are evicted last.
  for (auto it = block_ids_.rbegin(); it != block_ids_.rend(); ++it) pool.release(*it);
  block_ids_.clear();
  hashes_.clear();
}

}  // namespace llmesh::kv
