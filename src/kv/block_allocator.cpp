#include "kv/block_allocator.h"

#include "core/error.h"

namespace llmesh {

BlockAllocator::BlockAllocator(int64_t num_blocks) : ref_counts_(size_t(num_blocks), 0) {
  for (int64_t i = 0; i < num_blocks; ++i) free_ids_.push_back(int32_t(i));
}

int32_t BlockAllocator::allocate() {
  if (free_ids_.empty()) return -1;
  int32_t id = free_ids_.front();
  free_ids_.pop_front();
  ref_counts_[size_t(id)] = 1;
  return id;
}

void BlockAllocator::share(int32_t block_id) {
  check(ref_counts_[size_t(block_id)] > 0, "sharing free KV block {}", block_id);
  ++ref_counts_[size_t(block_id)];
}

void BlockAllocator::release(int32_t block_id) {
  int32_t& count = ref_counts_[size_t(block_id)];
  check(count > 0, "releasing free KV block {}", block_id);
  if (--count == 0) free_ids_.push_back(block_id);
}

bool BlockTable::reserve(BlockAllocator& allocator, int64_t num_tokens) {
  const int64_t needed = (num_tokens + block_size_ - 1) / block_size_ - int64_t(block_ids_.size());
  if (needed <= 0) return true;
  if (needed > allocator.num_free_blocks()) return false;
  for (int64_t i = 0; i < needed; ++i) block_ids_.push_back(allocator.allocate());
  return true;
}

void BlockTable::release_all(BlockAllocator& allocator) {
  for (int32_t id : block_ids_) allocator.release(id);
  block_ids_.clear();
}

}  // namespace llmesh
