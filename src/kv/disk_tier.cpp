#include "kv/disk_tier.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "core/log.h"

namespace llmesh::kv {

namespace {

// "<16 hex digits>.kvb" -> the key; false for any other name.
bool parse_block_file_name(std::string_view name, BlockHash& hash) {
  if (name.size() != 20 || !name.ends_with(".kvb")) return false;
  hash = 0;
  for (char c : name.substr(0, 16)) {
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return false;
    hash = hash << 4 | BlockHash(d);
  }
  return true;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

DiskTier::DiskTier(DiskTierOptions options) : options_(std::move(options)) {
  std::error_code ec;
  std::filesystem::create_directories(options_.dir, ec);
  check(!ec, "cannot create the KV disk directory {}: {}", options_.dir, ec.message());
  // Writable? (a read-only mount or a directory owned by someone else fails here, not on the first eviction)
  const std::string probe = options_.dir + "/.llmesh-write-probe";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  check(fd >= 0, "cannot write to the KV disk directory {}: {}", options_.dir, std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
  counters_.budget_bytes = options_.budget_bytes;
  index_directory();
  writer_ = std::thread([this] { writer_loop(); });
}

DiskTier::~DiskTier() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  writer_.join();
}

void DiskTier::index_directory() {
  const auto t0 = std::chrono::steady_clock::now();
  struct Found {
    BlockHash hash;
    BlockFileInfo info;
    std::vector<int32_t> tokens;
    timespec mtime;
  };
  std::vector<Found> found;
  DIR* d = ::opendir(options_.dir.c_str());
  check(d != nullptr, "cannot read the KV disk directory {}: {}", options_.dir, std::strerror(errno));
  while (dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    const std::string file = options_.dir + "/" + std::string(name);
    if (name.starts_with(".") && name.ends_with(".kvb.tmp")) {  // a write cut short by a crash
      ::unlink(file.c_str());
      continue;
    }
    BlockHash hash = 0;
    if (!parse_block_file_name(name, hash)) continue;
    BlockFileInfo info;
    std::vector<int32_t> tokens;
    BlockFileStatus status = read_block_file_header(file, options_.layout, info, &tokens);
    if (status == BlockFileStatus::Ok && info.hash != hash) status = BlockFileStatus::Corrupt;  // renamed or damaged
    switch (status) {
      case BlockFileStatus::Ok: {
        struct stat st {};
        ::stat(file.c_str(), &st);
        found.push_back({hash, info, std::move(tokens), st.st_mtim});
        break;
      }
      case BlockFileStatus::Truncated: ++recovery_.truncated, ::unlink(file.c_str()); break;
      case BlockFileStatus::Corrupt: ++recovery_.corrupt, ::unlink(file.c_str()); break;
      case BlockFileStatus::Foreign: ++recovery_.foreign; break;
    }
  }
  ::closedir(d);
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return a.mtime.tv_sec != b.mtime.tv_sec ? a.mtime.tv_sec < b.mtime.tv_sec : a.mtime.tv_nsec < b.mtime.tv_nsec;
  });
  std::lock_guard lock(mu_);
  for (Found& f : found) insert_locked(f.hash, std::move(f.tokens), f.info.file_bytes());
  const int64_t before = int64_t(index_.size());
  enforce_budget_locked(0);
  recovery_.evicted = before - int64_t(index_.size());
  recovery_.blocks = int64_t(index_.size());
  recovery_.bytes = bytes_;
  recovery_.seconds = seconds_since(t0);
  counters_.bad_files = recovery_.truncated + recovery_.corrupt;
}

void DiskTier::insert_locked(BlockHash hash, std::vector<int32_t> tokens, int64_t file_bytes) {
  if (index_.count(hash)) erase_locked(hash, false);
  lru_.push_back(hash);
  index_[hash] = Entry{std::move(tokens), file_bytes, std::prev(lru_.end())};
  bytes_ += file_bytes;
}

void DiskTier::erase_locked(BlockHash hash, bool delete_file) {
  auto it = index_.find(hash);
  if (it == index_.end()) return;
  bytes_ -= it->second.file_bytes;
  lru_.erase(it->second.lru);
  index_.erase(it);
  if (delete_file) ::unlink(path(hash).c_str());
}

void DiskTier::enforce_budget_locked(BlockHash keep) {
  while (bytes_ > options_.budget_bytes && !lru_.empty()) {
    const BlockHash oldest = lru_.front() == keep && lru_.size() > 1 ? *std::next(lru_.begin()) : lru_.front();
    erase_locked(oldest, true);
    ++counters_.evictions;
  }
}

bool DiskTier::contains(BlockHash hash, std::span<const int32_t> tokens) const {
  std::lock_guard lock(mu_);
  auto it = index_.find(hash);
  return it != index_.end() &&
         std::equal(it->second.tokens.begin(), it->second.tokens.end(), tokens.begin(), tokens.end());
}

bool DiskTier::wants(BlockHash hash) const {
  std::lock_guard lock(mu_);
  return writable_ && !index_.count(hash) && !queued_.count(hash);
}

bool DiskTier::read(BlockHash hash, std::span<const int32_t> tokens, std::span<std::byte> payload) {
  if (!contains(hash, tokens)) return false;
  const std::string file = path(hash);
  const BlockFileStatus status = read_block_file(file, options_.layout, hash, tokens, payload);
  std::lock_guard lock(mu_);
  if (status != BlockFileStatus::Ok) {
    log_warn("KV disk tier: {} is {}; dropped, not served", file, block_file_status_name(status));
    erase_locked(hash, true);
    ++counters_.bad_files;
    return false;
  }
  ++counters_.reads;
  if (auto it = index_.find(hash); it != index_.end()) lru_.splice(lru_.end(), lru_, it->second.lru);
  ::utimensat(AT_FDCWD, file.c_str(), nullptr, 0);  // recency that outlives a restart
  return true;
}

bool DiskTier::enqueue(BlockRecord record) {
  {
    std::lock_guard lock(mu_);
    const int64_t bytes = record.num_bytes();
    if (!writable_ || index_.count(record.hash) || queued_.count(record.hash)) return false;
    if (queue_bytes_ + bytes > options_.max_queue_bytes) {
      ++counters_.dropped_writes;
      return false;
    }
    queue_bytes_ += bytes;
    queued_.insert(record.hash);
    queue_.push_back(std::move(record));
  }
  cv_.notify_all();
  return true;
}

void DiskTier::writer_loop() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) break;  // stopping, and everything queued is written
    BlockRecord record = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    const uint64_t generation = generation_;
    lock.unlock();
    std::string error;
    try {
      write_block_file(options_.dir, record, options_.layout);
    } catch (const std::exception& e) {
      error = e.what();
    }
    lock.lock();
    writing_ = false;
    queued_.erase(record.hash);
    queue_bytes_ -= record.num_bytes();
    if (!error.empty()) {
      ++counters_.write_errors;
      if (writable_) log_warn("KV disk tier: {}; writing to {} is off from now on (what is there stays readable)", error,
                              options_.dir);
      writable_ = false;
      counters_.dropped_writes += int64_t(queue_.size());
      queue_.clear(), queued_.clear(), queue_bytes_ = 0;
    } else if (generation != generation_) {
      ::unlink(path(record.hash).c_str());  // cleared while it was being written
    } else {
      ++counters_.writes;
      const int64_t file_bytes = int64_t(kBlockFileHeaderBytes) + record.num_bytes();
      insert_locked(record.hash, std::move(record.tokens), file_bytes);
      enforce_budget_locked(record.hash);
    }
    cv_.notify_all();
  }
}

void DiskTier::flush() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return queue_.empty() && !writing_; });
}

int64_t DiskTier::clear() {
  std::lock_guard lock(mu_);
  const int64_t n = int64_t(index_.size());
  ++generation_;
  counters_.dropped_writes += int64_t(queue_.size());
  queue_.clear(), queued_.clear(), queue_bytes_ = 0;
  while (!lru_.empty()) erase_locked(lru_.front(), true);
  return n;
}

DiskTierStats DiskTier::stats() const {
  std::lock_guard lock(mu_);
  DiskTierStats s = counters_;
  s.blocks = int64_t(index_.size());
  s.bytes = bytes_;
  s.queue_blocks = int64_t(queue_.size()) + (writing_ ? 1 : 0);
  s.queue_bytes = queue_bytes_;
  s.writable = writable_;
  return s;
}

}  // namespace llmesh::kv
