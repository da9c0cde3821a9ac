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
  for (int32_t id = 0; id < int32_t(num_blocks); ++id) push_free_tail(id);
}

void BlockPool::push_free_tail(int32_t id) {
  Block& b = blocks_[size_t(id)];
  b.prev = free_tail_;
  b.next = -1;
  if (free_tail_ >= 0) blocks_[size_t(free_tail_)].next = id;
  else free_head_ = id;
  free_tail_ = id;
  b.on_free_list = true;
  ++num_free_;
}

void BlockPool::unlink_free(int32_t id) {
  Block& b = blocks_[size_t(id)];
  if (b.prev >= 0) blocks_[size_t(b.prev)].next = b.next;
  else free_head_ = b.next;
  if (b.next >= 0) blocks_[size_t(b.next)].prev = b.prev;
  else free_tail_ = b.prev;
  b.prev = b.next = -1;
  b.on_free_list = false;
  --num_free_;
}

void BlockPool::uncache(int32_t id) {
  Block& b = blocks_[size_t(id)];
  if (!b.hashed) return;
  auto it = cached_.find(b.hash);
  if (it != cached_.end() && it->second == id) cached_.erase(it);
  if (on_uncache_) on_uncache_({id, b.hash, b.parent, b.tokens});
  b.hashed = false;
  b.tokens.clear();
}

int32_t BlockPool::allocate() {
  if (free_head_ < 0) return -1;
  const int32_t id = free_head_;
  unlink_free(id);
  uncache(id);  // evicted: its old content is about to be overwritten
  blocks_[size_t(id)].ref_count = 1;
  return id;
}

void BlockPool::share(int32_t block_id) {
  Block& b = blocks_[size_t(block_id)];
  if (b.ref_count == 0) {
    check(b.hashed && b.on_free_list, "sharing KV block {} that is neither held nor cached", block_id);
    unlink_free(block_id);
  }
  ++b.ref_count;
}

void BlockPool::release(int32_t block_id) {
  Block& b = blocks_[size_t(block_id)];
  check(b.ref_count > 0, "releasing KV block {} that nobody holds", block_id);
  if (--b.ref_count == 0) push_free_tail(block_id);
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
  for (int32_t id = free_head_; id >= 0; id = blocks_[size_t(id)].next) {
    if (blocks_[size_t(id)].hashed) {
      uncache(id);
      ++dropped;
    }
  }
  return dropped;
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
