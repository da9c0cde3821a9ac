// The serving engine: one loop thread owns the scheduler, the KV pool, the
// prefix cache and the model. Other threads only submit, cancel, and read
// their request's output channel.
//
//   auto handle = engine.submit(request);        // HTTP thread
//   TokenEvent ev;
//   while (handle->next(&ev)) { ... if (ev.finish_reason != FinishReason::None) break; }
//   handle->cancel();                            // e.g. the client disconnected
//
// Each step: running decodes first, then chunks of waiting prefills, within a
// token budget (--max-batched-tokens); requests are admitted while KV blocks
// are free; when the pool runs dry the newest running request is preempted
// (its blocks freed, recomputed later). Full blocks are kept in the prefix
// cache, shared by content hash, evicted LRU only when blocks are needed.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/loaded_model.h"
#include "engine/request.h"

namespace llmesh {

struct EngineOptions {
  int64_t context_tokens = 0;           // 0: the model's trained context; else at most that
  int64_t kv_cache_tokens = 0;          // 0: from kv_cache_bytes or the context length
  int64_t block_size = 16;
  int64_t max_running_requests = 16;
  int64_t max_batched_tokens = 512;     // per-step token budget (decodes + prefill chunks)
  int64_t max_waiting_requests = 256;   // beyond this submit() throws QueueFullError
  bool enable_prefix_cache = true;
};

// Thrown by submit() when the waiting queue is full (HTTP 429).
class QueueFullError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A request's output channel, shared by the engine (producer) and the API thread (consumer).
class RequestHandle {
 public:
  // Blocks until an event is available; false once the request has finished
  // and every event has been read.
  bool next(TokenEvent* event);
  // Same, but gives up after `timeout_ms` (returns false with *timed_out = true).
  bool next_for(TokenEvent* event, int64_t timeout_ms, bool* timed_out);
  // Asks the engine to stop this request at its next step.
  void cancel() { cancelled_.store(true); }
  bool cancelled() const { return cancelled_.load(); }
  const std::string& request_id() const { return request_id_; }

  // Engine side.
  explicit RequestHandle(std::string request_id) : request_id_(std::move(request_id)) {}
  void push(TokenEvent event);

 private:
  std::string request_id_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<TokenEvent> events_;
  bool finished_ = false;
  std::atomic<bool> cancelled_{false};
};

// Counters and gauges for /metrics (a snapshot).
struct EngineStats {
  int64_t num_running = 0, num_waiting = 0;
  int64_t num_blocks_total = 0, num_blocks_used = 0, num_blocks_cached = 0;
  int64_t prefix_queried_tokens = 0, prefix_hit_tokens = 0;
  int64_t prompt_tokens = 0, generation_tokens = 0;
  int64_t num_preemptions = 0, num_finished = 0;
};

class Engine {
 public:
  Engine(LoadedModel& model, const EngineOptions& options);
  ~Engine();

  // Thread-safe. Throws QueueFullError, or Error for a request that can never fit.
  std::shared_ptr<RequestHandle> submit(Request request);
  EngineStats stats() const;
  // Drops every unreferenced cached block; returns how many were dropped.
  int64_t flush_cache();
  int64_t kv_cache_tokens() const;
  int64_t context_tokens() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmesh
