#include "route/prefix_history.h"

#include <xxhash.h>

namespace llmesh::route {

std::vector<uint64_t> prefix_block_hashes(std::string_view text, size_t block_bytes) {
  std::vector<uint64_t> hashes;
  if (block_bytes == 0) return hashes;
  uint64_t previous = 0;
  for (size_t start = 0; start + block_bytes <= text.size(); start += block_bytes) {
    previous = XXH3_64bits_withSeed(text.data() + start, block_bytes, previous);
    hashes.push_back(previous);
  }
  return hashes;
}

int64_t PrefixHistory::match_blocks(const std::vector<uint64_t>& blocks) const {
  int64_t n = 0;
  for (uint64_t h : blocks) {
    if (!index_.contains(h)) break;
    ++n;
  }
  return n;
}

// Last block first, so the leading blocks end up most recent: eviction takes a
// prompt's tail before its head, as a prefix cache evicts leaves first.
void PrefixHistory::insert(const std::vector<uint64_t>& blocks) {
  for (auto b = blocks.rbegin(); b != blocks.rend(); ++b) {
    const uint64_t h = *b;
    if (auto it = index_.find(h); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      continue;
    }
    lru_.push_front(h);
    index_[h] = lru_.begin();
    if (int64_t(index_.size()) > capacity_) {
      index_.erase(lru_.back());
      lru_.pop_back();
    }
  }
}

void PrefixHistory::clear() {
  lru_.clear();
  index_.clear();
}

}  // namespace llmesh::route
