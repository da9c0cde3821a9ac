// The paged KV cache's memory: fixed-size blocks of K and V for every layer.
//
// A block holds `block_size` consecutive positions of one sequence, for all
// layers at once, so one block id (and one block table per sequence) serves
// the whole model. Layout per layer, for K and V alike:
//   [num_blocks, block_size, num_kv_heads, head_dim] f32
// Memory is reserved with an anonymous mapping: pages are committed only when
// first written, so a large pool costs nothing until it is used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace llmesh {

struct KvCacheShape {
  int64_t num_layers = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t block_size = 16;  // tokens per block
  int64_t num_blocks = 0;

  int64_t bytes_per_token() const { return num_layers * num_kv_heads * head_dim * 2 * int64_t(sizeof(float)); }
  int64_t bytes_per_block() const { return bytes_per_token() * block_size; }
  int64_t num_tokens() const { return num_blocks * block_size; }
};

class KvPool {
 public:
  explicit KvPool(const KvCacheShape& shape);
  ~KvPool();
  KvPool(const KvPool&) = delete;
  KvPool& operator=(const KvPool&) = delete;

  const KvCacheShape& shape() const { return shape_; }
  float* k(int64_t layer) const { return base_ + layer_floats() * (2 * layer); }
  float* v(int64_t layer) const { return base_ + layer_floats() * (2 * layer + 1); }
  size_t num_bytes() const { return num_bytes_; }

  // One block's K and V for every layer, as one unit of shape().bytes_per_block()
  // bytes ([layer][K|V][block_size][kv_heads][head_dim]): what a lower tier
  // stores or a transfer sends. Error when the size or the id is wrong.
  void read_block(int32_t block_id, std::span<std::byte> out) const;
  void write_block(int32_t block_id, std::span<const std::byte> in);

 private:
  int64_t layer_floats() const {
    return shape_.num_blocks * shape_.block_size * shape_.num_kv_heads * shape_.head_dim;
  }
  KvCacheShape shape_;
  float* base_ = nullptr;
  size_t num_bytes_ = 0;
};

}  // namespace llmesh
