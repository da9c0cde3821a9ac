// The disk tier: KV blocks as content-addressed files in one directory
// (block_file.h), so sessions survive evictions from RAM and restarts.
//
// - Writes never block the engine: enqueue() hands a record to a writer
//   thread through a queue bounded in bytes; when it is full the write is
//   dropped (counted), never waited for.
// - At startup the directory is indexed from the files' headers (no payload
//   reads); truncated and corrupt files are deleted and counted, files of
//   another namespace are counted and left alone, stale temporaries removed.
// - read() checks the whole file (checksum, key, tokens) before a byte is
//   used; a file that fails is deleted and counted, never served.
// - The byte budget is kept by deleting the least recently used files
//   (recency survives restarts through the files' modification times).
// - A write error (disk full, directory gone) turns writing off with one
//   warning; blocks already on disk stay readable.
//
// Thread-safe: the engine thread calls contains/read/enqueue/clear, the
// writer thread writes, HTTP threads may read stats().
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <list>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "kv/block_file.h"

namespace llmesh::kv {

struct DiskTierOptions {
  std::string dir;
  int64_t budget_bytes = 0;
  int64_t max_queue_bytes = int64_t(256) << 20;  // write-behind backlog beyond which writes are dropped
  BlockFileLayout layout;
};

// What the startup index found.
struct DiskRecovery {
  int64_t blocks = 0, bytes = 0;
  int64_t truncated = 0, corrupt = 0, foreign = 0;  // skipped
  int64_t evicted = 0;                              // over the budget
  double seconds = 0;
};

struct DiskTierStats {
  int64_t blocks = 0, bytes = 0, budget_bytes = 0;
  int64_t queue_blocks = 0, queue_bytes = 0;
  int64_t writes = 0, dropped_writes = 0, write_errors = 0, evictions = 0;
  int64_t reads = 0, bad_files = 0;  // bad_files: failed their checks (at startup or on read), never served
  bool writable = true;
};

class DiskTier {
 public:
  // Creates `options.dir` if needed and indexes it. Throws Error when the
  // directory cannot be created or written.
  explicit DiskTier(DiskTierOptions options);
  // Writes what is queued, then stops the writer.
  ~DiskTier();
  DiskTier(const DiskTier&) = delete;
  DiskTier& operator=(const DiskTier&) = delete;

  const DiskRecovery& recovery() const { return recovery_; }
  const std::string& dir() const { return options_.dir; }
  bool contains(BlockHash hash, std::span<const int32_t> tokens) const;
  // A write of this block would be taken: writing is on and it is neither
  // stored nor queued. One lock, no copy: callers ask before copying a block out.
  bool wants(BlockHash hash) const;
  // Reads a block into `payload` after checking it. False (the file is dropped) when it fails.
  bool read(BlockHash hash, std::span<const int32_t> tokens, std::span<std::byte> payload);
  // Queues a write. False when dropped: queue full, writing off, or already stored/queued.
  bool enqueue(BlockRecord record);
  // Waits until everything queued so far is written (or dropped).
  void flush();
  // Deletes every file of this namespace and the queue; returns how many blocks.
  int64_t clear();
  DiskTierStats stats() const;

 private:
  struct Entry {
    std::vector<int32_t> tokens;
    int64_t file_bytes = 0;
    std::list<BlockHash>::iterator lru;
  };
  void index_directory();
  void writer_loop();
  // With mu_ held:
  void insert_locked(BlockHash hash, std::vector<int32_t> tokens, int64_t file_bytes);
  void erase_locked(BlockHash hash, bool delete_file);
  void enforce_budget_locked(BlockHash keep);
  std::string path(BlockHash hash) const { return options_.dir + "/" + block_file_name(hash); }

  DiskTierOptions options_;
  DiskRecovery recovery_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<BlockHash, Entry> index_;
  std::list<BlockHash> lru_;  // front: least recently used
  int64_t bytes_ = 0;
  std::deque<BlockRecord> queue_;
  std::unordered_set<BlockHash> queued_;
  int64_t queue_bytes_ = 0;
  bool writing_ = false;    // the writer holds a popped record
  uint64_t generation_ = 0;  // bumped by clear(): a write in flight across it is discarded
  bool writable_ = true, stop_ = false;
  DiskTierStats counters_;
  std::thread writer_;
};

}  // namespace llmesh::kv
