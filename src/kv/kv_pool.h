// The paged KV cache's memory: fixed-size blocks of K and V for every layer.
//
// A block holds `block_size` consecutive positions of one sequence, for all
// layers at once, so one block id (and one block table per sequence) serves
// the whole model. Layout per layer, for K and V alike:
//   [num_blocks, block_size, num_kv_heads] rows of head_dim values in `dtype`
// (kernels::KvLayerView; q8_0 rows are blocks of 32 along head_dim).
// Multi-head latent attention (DeepSeek V3) caches one row per position instead:
// the compressed latent and the rotary key (kv_lora_rank + rope dims), whose first
// kv_lora_rank values are also the values, so there is no V region (shared_value_dim).
// Memory is reserved with an anonymous mapping: pages are committed only when
// first written, so a large pool costs nothing until it is used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/dtype.h"
#include "kv/block_memory.h"

namespace llmesh::kv {

// f16 by default: half of f32's memory and bandwidth, and 8x less rounding error than bf16
// (10 vs 7 mantissa bits; K/V stay far inside f16's range, and store_kv saturates anyway).
// docs/engine.md "KV cache dtype" has the measurements.
inline constexpr DType kDefaultKvDtype = DType::F16;

struct KvCacheShape {
  int64_t num_layers = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t block_size = 16;  // tokens per block
  int64_t num_blocks = 0;
  DType dtype = kDefaultKvDtype;
  // 0: V rows of head_dim values of their own. > 0 (MLA): V is the first shared_value_dim
  // values of each K row, and nothing else is stored.
  int64_t shared_value_dim = 0;

  bool has_v_region() const { return shared_value_dim == 0; }
  int64_t value_dim() const { return has_v_region() ? head_dim : shared_value_dim; }
  // The K (and V) rows of every layer and kv head for one position.
  int64_t bytes_per_token() const {
    return num_layers * num_kv_heads * (has_v_region() ? 2 : 1) * int64_t(dtype_row_bytes(dtype, head_dim));
  }
  int64_t bytes_per_block() const { return bytes_per_token() * block_size; }
  int64_t num_tokens() const { return num_blocks * block_size; }
};

class KvPool : public BlockMemory {
 public:
  explicit KvPool(const KvCacheShape& shape);
  ~KvPool() override;
  KvPool(const KvPool&) = delete;
  KvPool& operator=(const KvPool&) = delete;

  const KvCacheShape& shape() const { return shape_; }
  // The start of one layer's K (or V) region: what kernels::KvLayerView points at
  // (V is K when the values live in the K rows).
  void* k(int64_t layer) const { return base_ + layer_bytes() * size_t(regions_per_layer() * layer); }
  void* v(int64_t layer) const {
    return shape_.has_v_region() ? base_ + layer_bytes() * size_t(2 * layer + 1) : k(layer);
  }
  size_t num_bytes() const { return num_bytes_; }

  // One block's K and V for every layer, as one unit (see BlockMemory): what a
  // lower tier stores or a transfer sends.
  int64_t bytes_per_block() const override { return shape_.bytes_per_block(); }
  void read_block(int32_t block_id, std::span<std::byte> out) const override;
  void write_block(int32_t block_id, std::span<const std::byte> in) override;

 private:
  int64_t regions_per_layer() const { return shape_.has_v_region() ? 2 : 1; }
  // One layer's K (or V) of one block, and of the whole pool.
  size_t block_region_bytes() const {
    return size_t(shape_.bytes_per_block() / (regions_per_layer() * shape_.num_layers));
  }
  size_t layer_bytes() const { return block_region_bytes() * size_t(shape_.num_blocks); }
  KvCacheShape shape_;
  std::byte* base_ = nullptr;
  size_t num_bytes_ = 0;
};

}  // namespace llmesh::kv
