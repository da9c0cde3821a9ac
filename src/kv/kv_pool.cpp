#include "kv/kv_pool.h"

#include <sys/mman.h>

#include "core/error.h"

namespace llmesh {

KvPool::KvPool(const KvCacheShape& shape) : shape_(shape) {
  check(shape.num_blocks > 0 && shape.block_size > 0, "KV cache needs at least one block");
  num_bytes_ = size_t(shape.bytes_per_block()) * size_t(shape.num_blocks);
  void* p = ::mmap(nullptr, num_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  check(p != MAP_FAILED, "cannot reserve {:.2f} GiB for the KV cache ({} blocks of {} tokens)",
        double(num_bytes_) / (1ull << 30), shape.num_blocks, shape.block_size);
  base_ = static_cast<float*>(p);
  // Attention streams every cached K/V of a sequence per decoded token: 2 MiB pages
  // spare the TLB misses of 4 KiB ones (pages are still only backed when first written).
  ::madvise(p, num_bytes_, MADV_HUGEPAGE);
}

KvPool::~KvPool() {
  if (base_) ::munmap(base_, num_bytes_);
}

}  // namespace llmesh
