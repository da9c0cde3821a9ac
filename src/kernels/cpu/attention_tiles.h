// How the CPU paged-attention kernels split a batch into tiles of up to 16 queries that read
// the same K/V (ISA-independent; attention_avx512.cpp and attention_avx2.cpp share it).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/ops.h"

namespace llmesh::kernels::cpu {

inline constexpr int kTileQueries = 16;

struct AttentionTile {
  int64_t token_begin;  // first token of the run in the batch
  int64_t num_tokens;   // consecutive tokens of one sequence with consecutive positions
  int64_t kv_head;
  int64_t head_begin;   // first query head (within the kv head's group) in this tile
  int64_t num_heads;    // query heads per token in this tile
};

// Splits the batch into tiles: runs of consecutive tokens of one sequence with consecutive
// positions, cut so that tokens x heads-per-tile <= 16, for every kv head. Tiles of one kv head
// are adjacent so that a thread walking them finds that head's K/V still in its L2.
inline std::vector<AttentionTile> make_tiles(const AttentionBatch& batch, int64_t num_heads, int64_t num_kv_heads) {
  const int64_t group = num_heads / num_kv_heads;
  const int64_t heads_per_tile = std::min<int64_t>(group, kTileQueries);
  const int64_t max_tokens = kTileQueries / heads_per_tile;
  std::vector<std::pair<int64_t, int64_t>> runs;  // (first token, num tokens)
  for (int64_t t = 0; t < batch.num_tokens;) {
    int64_t run = 1;
    while (run < max_tokens && t + run < batch.num_tokens && batch.seq_index[t + run] == batch.seq_index[t] &&
           batch.positions[t + run] == batch.positions[t + run - 1] + 1)
      ++run;
    runs.emplace_back(t, run);
    t += run;
  }
  std::vector<AttentionTile> tiles;
  for (int64_t kv_head = 0; kv_head < num_kv_heads; ++kv_head)
    for (auto [token_begin, num_tokens] : runs)
      for (int64_t h = 0; h < group; h += heads_per_tile)
        tiles.push_back({token_begin, num_tokens, kv_head, h, std::min(heads_per_tile, group - h)});
  return tiles;
}

// Folds an attention sink (one more logit in the softmax's denominator, with no value) into a
// query's online softmax at its end: running_sum becomes relative to max(running_max, sink), and
// `norm` is the factor the accumulated output, relative to running_max, then takes.
inline void sink_into_sum(float sink, float running_max, float& running_sum, float& norm) {
  const float m = std::max(running_max, sink);
  norm = std::exp(running_max - m);
  running_sum = running_sum * norm + std::exp(sink - m);
}

}  // namespace llmesh::kernels::cpu
