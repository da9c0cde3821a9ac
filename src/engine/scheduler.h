// Decides what each engine step computes.
//
// There are no prefill/decode phases: every sequence has num_tokens (prompt
// plus generated) and num_computed_tokens, and a step lets some sequences
// catch up within a token budget:
//   1. running sequences first, in arrival order (decodes need 1 token; a
//      sequence mid-prefill gets the next chunk);
//   2. then waiting sequences in FIFO order, each starting with a prefix-cache
//      lookup (through the KV cache manager), while the budget, the running
//      limit and free blocks allow.
//      The queue head is never skipped, so nothing starves.
// When a running sequence needs a block and none is free, the most recently
// arrived running sequence is preempted: its blocks go back to the pool (full
// ones stay cached), and it waits at the head of the queue to be recomputed.
//
// Builds without kernels or a model: tests (and the simulator) drive it with
// fake steps.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "engine/sequence.h"
#include "kv/kv_cache_manager.h"

namespace llmesh::engine {

struct SchedulerOptions {
  int64_t max_running_requests = 16;
  int64_t max_batched_tokens = 512;
};

struct ScheduledSequence {
  Sequence* sequence;
  int64_t num_new_tokens;  // tokens [num_computed, num_computed + num_new) run this step
};

// What one step computes, in scheduling order (running sequences first).
using ScheduledBatch = std::vector<ScheduledSequence>;

struct SchedulerCounters {
  int64_t prefix_queried_tokens = 0, prefix_hit_tokens = 0, num_preemptions = 0;
};

class Scheduler {
 public:
  // `kv` (not owned) hands out the blocks and keeps the prefix cache.
  Scheduler(const SchedulerOptions& options, kv::KvCacheManager& kv);

  void add(std::unique_ptr<Sequence> sequence);
  ScheduledBatch schedule();
  // After the step ran: the scheduled tokens are computed; newly full blocks enter the cache.
  void on_step_done(const ScheduledBatch& batch);
  // Releases the sequence's blocks and forgets it.
  void finish(Sequence* sequence);

  const std::deque<Sequence*>& running() const { return running_; }
  const std::deque<Sequence*>& waiting() const { return waiting_; }
  template <typename Fn>
  void for_each(Fn&& fn) {
    for (auto& s : sequences_) fn(s.get());
  }
  bool has_work() const { return !running_.empty() || !waiting_.empty(); }
  const kv::KvCacheManager& kv() const { return kv_; }
  const SchedulerCounters& counters() const { return counters_; }
  const SchedulerOptions& options() const { return options_; }

 private:
  void preempt(Sequence* sequence);
  // Shares the cached blocks of the sequence's longest cached prefix (leaving
  // at least one token to compute). Returns the number of tokens hit.
  int64_t match_prefix(Sequence* sequence);

  SchedulerOptions options_;
  kv::KvCacheManager& kv_;
  std::vector<std::unique_ptr<Sequence>> sequences_;
  std::deque<Sequence*> running_;  // arrival order
  std::deque<Sequence*> waiting_;  // arrival order (preempted ones go back in order)
  SchedulerCounters counters_;
};

}  // namespace llmesh::engine
