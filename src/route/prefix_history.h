// The router's memory of which prompt blocks each target has seen, standing in
// for the target's prefix cache when the target does not report its own.
//
// A prompt is cut into fixed-size byte blocks of its canonical text
// (api::prompt_prefix_text) and each full block gets a chained hash
// h_i = XXH3(h_{i-1}, bytes_i), so h_i names the whole prefix up to block i:
// two prompts share h_i exactly when they share their first i+1 blocks.
//
// Guarantees: at most `capacity` hashes per history (least recently used
// dropped first, as an LRU prefix cache would drop them); match_blocks()
// counts leading blocks only (a hole ends the match).
#pragma once

#include <cstdint>
#include <list>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace llmesh::route {

// Chained hashes of the full `block_bytes`-byte blocks of `text` (a partial last block is left out).
std::vector<uint64_t> prefix_block_hashes(std::string_view text, size_t block_bytes);

class PrefixHistory {
 public:
  explicit PrefixHistory(int64_t capacity) : capacity_(capacity) {}

  // Leading blocks of `blocks` present here.
  int64_t match_blocks(const std::vector<uint64_t>& blocks) const;
  // Records every block as just used.
  void insert(const std::vector<uint64_t>& blocks);
  void clear();
  int64_t size() const { return int64_t(index_.size()); }

 private:
  int64_t capacity_;
  std::list<uint64_t> lru_;  // most recently used first
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> index_;
};

}  // namespace llmesh::route
