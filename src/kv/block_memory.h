// Where the K/V bytes of the pool's blocks live (the executor's KvPool, on its
// device): what the lower tiers copy a block out of when it is evicted and
// back into when a prefix hit promotes it. One block is one unit of
// bytes_per_block() bytes ([layer][K|V][block_size][kv_heads][head_dim]).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace llmesh::kv {

class BlockMemory {
 public:
  virtual ~BlockMemory() = default;
  virtual int64_t bytes_per_block() const = 0;
  // Error when the id or the size is wrong.
  virtual void read_block(int32_t block_id, std::span<std::byte> out) const = 0;
  virtual void write_block(int32_t block_id, std::span<const std::byte> in) = 0;
};

}  // namespace llmesh::kv
