#include "kv/kv_pool.h"

#include <sys/mman.h>

#include <cstring>

#include "core/error.h"

namespace llmesh::kv {

KvPool::KvPool(const KvCacheShape& shape) : shape_(shape) {
  check(shape.num_blocks > 0 && shape.block_size > 0, "KV cache needs at least one block");
  check(shape.head_dim % dtype_block_size(shape.dtype) == 0,
        "KV cache dtype {} needs head_dim to be a multiple of {}; this model's is {} (use f16 or bf16)",
        dtype_name(shape.dtype), dtype_block_size(shape.dtype), shape.head_dim);
  check(shape.value_dim() > 0 && shape.value_dim() <= shape.head_dim &&
            shape.value_dim() % dtype_block_size(shape.dtype) == 0,
        "KV cache values of {} dims cannot be read from rows of {} in {}", shape.value_dim(), shape.head_dim,
        dtype_name(shape.dtype));
  num_bytes_ = size_t(shape.bytes_per_block()) * size_t(shape.num_blocks);
  void* p = ::mmap(nullptr, num_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  check(p != MAP_FAILED, "cannot reserve {:.2f} GiB for the KV cache ({} blocks of {} tokens)",
        double(num_bytes_) / (1ull << 30), shape.num_blocks, shape.block_size);
  base_ = static_cast<std::byte*>(p);
  // Attention streams every cached K/V of a sequence per decoded token: 2 MiB pages
  // spare the TLB misses of 4 KiB ones (pages are still only backed when first written).
  ::madvise(p, num_bytes_, MADV_HUGEPAGE);
}

namespace {
void check_block(const KvCacheShape& shape, int32_t block_id, size_t bytes) {
  check(block_id >= 0 && block_id < shape.num_blocks, "KV block {} is outside the pool ({} blocks)", block_id,
        shape.num_blocks);
  check(bytes == size_t(shape.bytes_per_block()), "KV block copy of {} bytes; a block holds {}", bytes,
        shape.bytes_per_block());
}
}  // namespace

void KvPool::read_block(int32_t block_id, std::span<std::byte> out) const {
  check_block(shape_, block_id, out.size());
  const size_t region = block_region_bytes(), offset = region * size_t(block_id);
  std::byte* dst = out.data();
  for (int64_t layer = 0; layer < shape_.num_layers; ++layer) {
    std::memcpy(dst, static_cast<std::byte*>(k(layer)) + offset, region), dst += region;
    if (shape_.has_v_region()) std::memcpy(dst, static_cast<std::byte*>(v(layer)) + offset, region), dst += region;
  }
}

void KvPool::write_block(int32_t block_id, std::span<const std::byte> in) {
  check_block(shape_, block_id, in.size());
  const size_t region = block_region_bytes(), offset = region * size_t(block_id);
  const std::byte* src = in.data();
  for (int64_t layer = 0; layer < shape_.num_layers; ++layer) {
    std::memcpy(static_cast<std::byte*>(k(layer)) + offset, src, region), src += region;
    if (shape_.has_v_region()) std::memcpy(static_cast<std::byte*>(v(layer)) + offset, src, region), src += region;
  }
}

KvPool::~KvPool() {
  if (base_) ::munmap(base_, num_bytes_);
}

}  // namespace llmesh::kv
