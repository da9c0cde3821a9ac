#include "kv/kv_cache_manager.h"

#include <xxhash.h>

#include <chrono>

#include <fmt/format.h>

#include "core/error.h"

namespace llmesh::kv {

BlockHash cache_namespace(std::string_view model_identity, std::string_view architecture, int64_t block_size,
                          std::string_view kv_dtype) {
  return hash_namespace(fmt::format("llmesh-kv-v1|{}|{}|{}|{}", model_identity, architecture, block_size, kv_dtype));
}

KvCacheManager::KvCacheManager(const KvCacheConfig& config)
    : config_(config), pool_(config.num_blocks, config.block_size) {
  check(config.block_size > 0, "KV block size must be positive (got {})", config.block_size);
  pool_.set_uncache_hook([this](const CachedBlockRef& block) { on_uncache(block); });
  now_ms_ = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
}

void KvCacheManager::emit(const KvEvent& event) {
  for (KvCacheListener* l : listeners_) l->on_event(event);
}

void KvCacheManager::on_uncache(const CachedBlockRef& block) {
  if (!flushing_) {
    ++counters_.evictions;
    const int64_t now_ms = now_ms_();
    for (KvCacheListener* l : listeners_) l->on_evict(block, now_ms);
  }
  emit({KvEventType::BlockRemoved, block.hash, block.parent, block.block_id, block.tokens});
}

PrefixMatch KvCacheManager::find_prefix(std::span<const int32_t> tokens, int64_t max_blocks) const {
  PrefixMatch match;
  if (!config_.enable_prefix_cache) return match;
  const int64_t bs = config_.block_size;
  max_blocks = std::min(max_blocks, int64_t(tokens.size()) / bs);
  BlockHash parent = config_.cache_namespace;
  for (int64_t j = 0; j < max_blocks; ++j) {
    std::span<const int32_t> block_tokens = tokens.subspan(size_t(j * bs), size_t(bs));
    const BlockHash hash = hash_block(parent, block_tokens);
    const int32_t block_id = pool_.lookup(hash, block_tokens);
    if (block_id < 0 && !(lower_ && lower_->contains(hash, block_tokens))) break;
    match.hashes.push_back(hash);
    match.block_ids.push_back(block_id);
    parent = hash;
  }
  return match;
}

int64_t KvCacheManager::acquire(const PrefixMatch& match, std::span<const int32_t> tokens, BlockTable& table) {
  check(table.num_blocks() == 0, "acquire: the block table already holds {} blocks", table.num_blocks());
  pool_.expire_pins(now_ms_());
  // Hold every resident block first, so loading the others cannot evict them.
  for (int32_t id : match.block_ids)
    if (id >= 0) pool_.share(id);
  const size_t bs = size_t(config_.block_size);
  size_t j = 0;
  for (; j < match.block_ids.size(); ++j) {
    int32_t id = match.block_ids[j];
    if (id < 0) {
      std::span<const int32_t> block_tokens = tokens.subspan(j * bs, bs);
      id = pool_.allocate();
      if (id < 0) break;
      if (!lower_ || !lower_->load(match.hashes[j], block_tokens, id)) {
        pool_.release(id);
        ++counters_.failed_promotions;
        break;
      }
      const BlockHash parent = j == 0 ? config_.cache_namespace : match.hashes[j - 1];
      if (pool_.cache(id, match.hashes[j], parent, block_tokens))
        emit({KvEventType::BlockStored, match.hashes[j], parent, id, block_tokens});
      ++counters_.promoted_blocks;
    }
    table.append_cached(id, match.hashes[j]);
  }
  for (size_t k = j; k < match.block_ids.size(); ++k)  // the run stopped: let go of the rest
    if (match.block_ids[k] >= 0) pool_.release(match.block_ids[k]);
  return int64_t(j);
}

bool KvCacheManager::reserve(BlockTable& table, int64_t num_tokens) {
  pool_.expire_pins(now_ms_());
  return table.reserve(pool_, num_tokens);
}

void KvCacheManager::pin(const BlockTable& table, int64_t num_blocks, int64_t seconds) {
  if (!config_.enable_prefix_cache || seconds <= 0) return;
  const int64_t until = now_ms_() + seconds * 1000;
  const int64_t n = std::min<int64_t>(num_blocks, int64_t(table.hashes().size()));
  for (int64_t j = 0; j < n; ++j) pool_.pin(table.block_ids()[size_t(j)], until);
}

void KvCacheManager::cache_full_blocks(BlockTable& table, std::span<const int32_t> tokens, int64_t num_computed) {
  if (!config_.enable_prefix_cache) return;
  const int64_t bs = config_.block_size;
  const int64_t num_full = std::min(num_computed / bs, table.num_blocks());
  while (int64_t(table.hashes().size()) < num_full) {
    const size_t j = table.hashes().size();
    const BlockHash parent = j == 0 ? config_.cache_namespace : table.hashes().back();
    std::span<const int32_t> block_tokens = tokens.subspan(j * size_t(bs), size_t(bs));
    const BlockHash hash = hash_block(parent, block_tokens);
    const int32_t block_id = table.block_ids()[j];
    if (pool_.cache(block_id, hash, parent, block_tokens))
      emit({KvEventType::BlockStored, hash, parent, block_id, block_tokens});
    table.add_hash(hash);
  }
}

void KvCacheManager::release(BlockTable& table) { table.release_all(pool_); }

int64_t KvCacheManager::flush() {
  flushing_ = true;
  const int64_t dropped = pool_.flush();
  flushing_ = false;
  return dropped;
}

}  // namespace llmesh::kv
