// The KV cache's lower tiers behind the pool, under the same block keys:
//
//   pool (attention reads it) --evict--> host RAM tier --LRU out--> disk tier
//        ^                                   |                        |
//        +------- promote on a prefix hit ---+------------------------+
//
// - Eviction from the pool demotes: the block's K/V are copied to the host
//   tier instead of being lost.
// - With a disk tier every block is also written behind as soon as it is
//   full and cached (BlockStored), so a restart, or a kill -9, loses at most
//   the writes still queued; a block the host tier drops is written then if
//   it is not on disk yet.
// - A prefix match that continues past the pool loads the blocks back
//   (host first, then disk) into fresh pool blocks (KvCacheManager::acquire).
//
// Engine thread only (the engine publishes stats() with its own); the disk
// tier has its writer thread.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "kv/block_memory.h"
#include "kv/disk_tier.h"
#include "kv/host_tier.h"
#include "kv/kv_cache_manager.h"

namespace llmesh::kv {

struct KvTierOptions {
  int64_t host_bytes = 0;   // 0: no host tier
  std::string disk_dir;     // "": no disk tier
  int64_t disk_bytes = 0;
  int64_t disk_queue_bytes = int64_t(256) << 20;

  bool enabled() const { return host_bytes > 0 || !disk_dir.empty(); }
};

// Upper bounds (seconds) of the per-block restore latency histogram; the last bucket is +Inf.
inline constexpr std::array<double, 8> kRestoreBuckets = {1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 1.0};

struct KvTierStats {
  struct Host {
    int64_t blocks = 0, bytes = 0, budget_bytes = 0;
    int64_t demotions = 0, promotions = 0, evictions = 0;
  } host;
  bool has_disk = false;
  std::string disk_dir;
  DiskTierStats disk;
  DiskRecovery disk_recovery;
  int64_t disk_promotions = 0;
  // Every promotion (host or disk): blocks, bytes and per-block latency.
  int64_t restored_blocks = 0, restored_bytes = 0;
  double restore_seconds = 0;
  std::array<int64_t, kRestoreBuckets.size() + 1> restore_histogram{};
};

class KvTiers : public KvCacheListener, public LowerTier {
 public:
  // `memory` (not owned) holds the pool's K/V. A disk directory that cannot
  // be used leaves the disk tier off with one warning (the server keeps serving).
  KvTiers(const KvTierOptions& options, BlockMemory& memory, const BlockFileLayout& layout);

  bool contains(BlockHash hash, std::span<const int32_t> tokens) const override;
  bool load(BlockHash hash, std::span<const int32_t> tokens, int32_t block_id) override;
  void on_evict(const CachedBlockRef& block, int64_t now_ms) override;
  void on_event(const KvEvent& event) override;

  // Drops every block of both tiers (the disk tier's files of this namespace); returns how many.
  int64_t clear();
  // Waits for the disk tier's queued writes.
  void flush();
  KvTierStats stats() const;
  bool has_disk() const { return disk_ != nullptr; }

 private:
  BlockRecord copy_out(int32_t block_id, BlockHash hash, BlockHash parent, std::span<const int32_t> tokens) const;
  void write_behind(BlockRecord&& record);
  void count_restore(double seconds);

  BlockMemory& memory_;
  BlockFileLayout layout_;
  HostTier host_;
  std::unique_ptr<DiskTier> disk_;
  std::vector<std::byte> staging_;  // a disk read lands here before the pool
  KvTierStats counters_;
};

}  // namespace llmesh::kv
