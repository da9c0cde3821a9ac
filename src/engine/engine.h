// The serving engine: one loop thread owns the scheduler, the KV cache
// manager and the executor (model, KV pool, workspace). Other threads only
// submit, cancel, and read their request's output channel (RequestHandle).
// The engine sees token ids only: templates, tokenization and stop strings
// live with the caller.
//
// Each step: the scheduler picks running decodes first, then chunks of
// waiting prefills, within a token budget (--max-batched-tokens), admitting
// requests while KV blocks are free and preempting the newest running one
// when the pool runs dry; the batch is flattened into a StepInput, the
// executor runs it, and the TokenSelector samples each caught-up sequence's
// next token. Full blocks stay in the prefix cache, shared by content hash,
// evicted LRU only when blocks are needed.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/executor.h"
#include "engine/request.h"
#include "engine/request_handle.h"
#include "kv/kv_cache_manager.h"
#include "kv/kv_tiers.h"

namespace llmesh::engine {

struct EngineOptions {
  int64_t context_tokens = 0;           // 0: the model's trained context; else at most that
  int64_t kv_cache_tokens = 0;          // 0: the context length
  int64_t block_size = 16;
  DType kv_dtype = kv::kDefaultKvDtype;  // element type of the cached K/V (--kv-cache-dtype)
  int64_t max_running_requests = 16;
  int64_t max_batched_tokens = 512;     // per-step token budget (decodes + prefill chunks)
  int64_t max_waiting_requests = 256;   // beyond this submit() throws QueueFullError
  bool enable_prefix_cache = true;
  std::vector<int32_t> eos_token_ids;   // generation stops at any of these
  // The weights' content identity (model_identity()): with the architecture,
  // block size and KV dtype it seeds the prefix cache's keys.
  std::string model_identity;
  // Told of every eviction and cache change, on the engine thread (not owned).
  std::vector<kv::KvCacheListener*> kv_listeners;
  // Host RAM and disk tiers below the pool (off by default; needs the prefix cache).
  kv::KvTierOptions kv_tiers;
};

// Thrown by submit() when the waiting queue is full (HTTP 429).
class QueueFullError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Counters and gauges for /metrics (a snapshot).
struct EngineStats {
  int64_t num_running = 0, num_waiting = 0;
  int64_t num_blocks_total = 0, num_blocks_used = 0, num_blocks_cached = 0, num_blocks_pinned = 0;
  int64_t prefix_queried_tokens = 0, prefix_hit_tokens = 0;
  int64_t prompt_tokens = 0, generation_tokens = 0;
  int64_t num_preemptions = 0, num_finished = 0, num_evicted_blocks = 0;
  int64_t num_promoted_blocks = 0, num_failed_promotions = 0;  // loaded back from the tiers
  bool has_tiers = false;
  kv::KvTierStats tiers;
};

class Engine {
 public:
  Engine(std::unique_ptr<Executor> executor, const EngineOptions& options);
  ~Engine();

  // Thread-safe. Throws QueueFullError, or Error for a request that can never fit.
  std::shared_ptr<RequestHandle> submit(Request request);
  // Queues all of them at once (first to last), so one step can schedule them together.
  std::vector<std::shared_ptr<RequestHandle>> submit_all(std::vector<Request> requests);
  EngineStats stats() const;
  // Drops every unreferenced cached block (and, with `tiers`, every block of
  // the host and disk tiers); returns how many were dropped.
  int64_t flush_cache(bool tiers = false);
  // Waits until the blocks queued for the disk tier are written (thread-safe;
  // returns at once without a disk tier). Shutdown calls it after the drain.
  void flush_tier_writes();
  int64_t kv_cache_tokens() const;
  int64_t context_tokens() const;
  // The pool's element type and the K/V bytes one token holds in it (all layers).
  DType kv_dtype() const;
  int64_t kv_bytes_per_token() const;
  // The seed of the prefix cache's keys (see cache_namespace()).
  kv::BlockHash cache_namespace() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmesh::engine
