// Hands out KV blocks by id and counts who holds each one.
//
// Block states:  free --allocate--> held (ref_count >= 1) --release to 0--> free
// Several sequences may hold one block (a shared prefix): share() adds a
// holder. The free list is FIFO, so the block freed longest ago is reused
// first — the order the prefix cache will rely on to evict least-recently-used
// blocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace llmesh {

class BlockAllocator {
 public:
  explicit BlockAllocator(int64_t num_blocks);

  int64_t num_blocks() const { return int64_t(ref_counts_.size()); }
  int64_t num_free_blocks() const { return int64_t(free_ids_.size()); }

  // free -> held. Returns -1 when no block is free.
  int32_t allocate();
  // held -> held: one more holder.
  void share(int32_t block_id);
  // One holder fewer; held -> free when it was the last one.
  void release(int32_t block_id);
  int32_t ref_count(int32_t block_id) const { return ref_counts_[size_t(block_id)]; }

 private:
  std::vector<int32_t> ref_counts_;
  std::deque<int32_t> free_ids_;
};

// The blocks of one sequence, in position order: position p lives in
// block_ids[p / block_size] at offset p % block_size.
class BlockTable {
 public:
  explicit BlockTable(int64_t block_size) : block_size_(block_size) {}

  // Grows the table so positions [0, num_tokens) have blocks. Returns false
  // (leaving the table as it was) when the allocator runs out.
  bool reserve(BlockAllocator& allocator, int64_t num_tokens);
  // Returns every block to the allocator.
  void release_all(BlockAllocator& allocator);

  int64_t slot(int64_t position) const {
    return int64_t(block_ids_[size_t(position / block_size_)]) * block_size_ + position % block_size_;
  }
  const std::vector<int32_t>& block_ids() const { return block_ids_; }
  int64_t capacity_tokens() const { return int64_t(block_ids_.size()) * block_size_; }

 private:
  int64_t block_size_;
  std::vector<int32_t> block_ids_;
};

}  // namespace llmesh
