// One cached block's content outside the pool (in the host tier, on its way
// to disk, or read back): its chained key, its parent's key, its tokens and
// its K/V bytes (one BlockMemory unit).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kv/block_pool.h"

namespace llmesh::kv {

struct BlockRecord {
  BlockHash hash = 0;
  BlockHash parent = 0;
  std::vector<int32_t> tokens;
  std::vector<std::byte> payload;
  int64_t pinned_until_ms = 0;  // a client's cache_control TTL, on the cache manager's clock (0: none)

  int64_t num_bytes() const { return int64_t(payload.size() + tokens.size() * sizeof(int32_t)); }
};

}  // namespace llmesh::kv
