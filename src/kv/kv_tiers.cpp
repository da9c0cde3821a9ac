#include "kv/kv_tiers.h"

#include <chrono>

#include "core/log.h"

namespace llmesh::kv {

KvTiers::KvTiers(const KvTierOptions& options, BlockMemory& memory, const BlockFileLayout& layout)
    : memory_(memory), layout_(layout), host_(options.host_bytes) {
  counters_.host.budget_bytes = options.host_bytes;
  if (!options.disk_dir.empty()) {
    try {
      disk_ = std::make_unique<DiskTier>(DiskTierOptions{options.disk_dir, options.disk_bytes, options.disk_queue_bytes,
                                                         layout});
      counters_.has_disk = true;
      counters_.disk_dir = options.disk_dir;
      counters_.disk_recovery = disk_->recovery();
    } catch (const std::exception& e) {
      log_warn("KV disk tier off: {}", e.what());
    }
  }
}

BlockRecord KvTiers::copy_out(int32_t block_id, BlockHash hash, BlockHash parent,
                              std::span<const int32_t> tokens) const {
  BlockRecord r{hash, parent, {tokens.begin(), tokens.end()}, std::vector<std::byte>(size_t(memory_.bytes_per_block()))};
  memory_.read_block(block_id, r.payload);
  return r;
}

void KvTiers::write_behind(BlockRecord&& record) {
  if (disk_ && disk_->wants(record.hash)) disk_->enqueue(std::move(record));
}

bool KvTiers::contains(BlockHash hash, std::span<const int32_t> tokens) const {
  return host_.contains(hash, tokens) || (disk_ && disk_->contains(hash, tokens));
}

bool KvTiers::load(BlockHash hash, std::span<const int32_t> tokens, int32_t block_id) {
  const auto t0 = std::chrono::steady_clock::now();
  bool from_disk = false;
  if (std::optional<BlockRecord> r = host_.take(hash, tokens)) {
    memory_.write_block(block_id, r->payload);
  } else if (disk_) {
    staging_.resize(size_t(memory_.bytes_per_block()));
    if (!disk_->read(hash, tokens, staging_)) return false;
    memory_.write_block(block_id, staging_);
    from_disk = true;
  } else {
    return false;
  }
  ++(from_disk ? counters_.disk_promotions : counters_.host.promotions);
  count_restore(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return true;
}

void KvTiers::count_restore(double seconds) {
  ++counters_.restored_blocks;
  counters_.restored_bytes += memory_.bytes_per_block();
  counters_.restore_seconds += seconds;
  size_t b = 0;
  while (b < kRestoreBuckets.size() && seconds > kRestoreBuckets[b]) ++b;
  ++counters_.restore_histogram[b];
}

void KvTiers::on_evict(const CachedBlockRef& block, int64_t now_ms) {
  if (host_.budget_bytes() <= 0) return;  // no host tier: the disk copy (if any) was written when it was stored
  BlockRecord record = copy_out(block.block_id, block.hash, block.parent, block.tokens);
  record.pinned_until_ms = block.pinned_until_ms;
  host_.put(std::move(record), now_ms, [this](BlockRecord&& dropped) { write_behind(std::move(dropped)); });
  ++counters_.host.demotions;
}

void KvTiers::on_event(const KvEvent& event) {
  if (event.type != KvEventType::BlockStored || !disk_ || !disk_->wants(event.hash)) return;
  disk_->enqueue(copy_out(event.block_id, event.hash, event.parent_hash, event.tokens));
}

int64_t KvTiers::clear() {
  int64_t n = host_.clear();
  if (disk_) n += disk_->clear();
  return n;
}

void KvTiers::flush() {
  if (disk_) disk_->flush();
}

KvTierStats KvTiers::stats() const {
  KvTierStats s = counters_;
  s.host.blocks = host_.num_blocks();
  s.host.bytes = host_.num_bytes();
  s.host.evictions = host_.num_evictions();
  if (disk_) s.disk = disk_->stats();
  return s;
}

}  // namespace llmesh::kv
