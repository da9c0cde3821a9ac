#include "engine/scheduler.h"

#include <algorithm>

#include "core/error.h"

namespace llmesh::engine {

Scheduler::Scheduler(const SchedulerOptions& options, kv::KvCacheManager& kv) : options_(options), kv_(kv) {}

void Scheduler::add(std::unique_ptr<Sequence> sequence) {
  sequence->status = SequenceStatus::Waiting;
  waiting_.push_back(sequence.get());
  sequences_.push_back(std::move(sequence));
}

int64_t Scheduler::match_prefix(Sequence* seq) {
  // At least one token must be left to compute: its logits sample the next token.
  const int64_t max_blocks = (seq->num_tokens() - 1) / kv_.block_size();
  const kv::PrefixMatch match = kv_.find_prefix(seq->tokens, max_blocks);
  return kv_.acquire(match, seq->tokens, seq->block_table) * kv_.block_size();
}

void Scheduler::preempt(Sequence* seq) {
  running_.erase(std::find(running_.begin(), running_.end(), seq));
  kv_.release(seq->block_table);
  seq->num_computed_tokens = 0;
  seq->status = SequenceStatus::Waiting;
  ++seq->num_preemptions;
  // Back into the queue at its arrival position (preempted sequences are older than most waiters).
  auto pos = std::find_if(waiting_.begin(), waiting_.end(),
                          [&](Sequence* w) { return w->arrival_order > seq->arrival_order; });
  waiting_.insert(pos, seq);
  ++counters_.num_preemptions;
}

ScheduledBatch Scheduler::schedule() {
  ScheduledBatch batch;
  int64_t budget = options_.max_batched_tokens;
  bool preempted = false;

  // 1. Running sequences, oldest first.
  for (size_t i = 0; i < running_.size() && budget > 0;) {
    Sequence* seq = running_[i];
    const int64_t n = std::min(seq->num_tokens() - seq->num_computed_tokens, budget);
    if (n <= 0) {
      ++i;
      continue;
    }
    bool self_preempted = false;
    while (!kv_.reserve(seq->block_table, seq->num_computed_tokens + n)) {
      Sequence* victim = running_.back();
      preempt(victim);
      preempted = true;
      if (victim == seq) {
        self_preempted = true;
        break;
      }
    }
    if (self_preempted) break;
    batch.push_back({seq, n});
    budget -= n;
    ++i;
  }

  // 2. Waiting sequences, FIFO, unless this step had to preempt (the pool is full).
  while (!preempted && budget > 0 && !waiting_.empty() &&
         int64_t(running_.size()) < options_.max_running_requests) {
    Sequence* seq = waiting_.front();
    if (seq->block_table.num_blocks() == 0) {
      const int64_t hit = match_prefix(seq);
      seq->num_computed_tokens = hit;
      if (seq->num_cached_tokens < 0) {  // count each request's prompt once
        seq->num_cached_tokens = hit;
        counters_.prefix_queried_tokens += seq->num_prompt_tokens;
        counters_.prefix_hit_tokens += hit;
      }
    }
    const int64_t n = std::min(seq->num_tokens() - seq->num_computed_tokens, budget);
    if (!kv_.reserve(seq->block_table, seq->num_computed_tokens + n)) {
      // Not enough free blocks: give the hit blocks back and wait for running sequences to finish.
      kv_.release(seq->block_table);
      seq->num_computed_tokens = 0;
      break;
    }
    waiting_.pop_front();
    seq->status = SequenceStatus::Running;
    running_.push_back(seq);
    batch.push_back({seq, n});
    budget -= n;
  }
  return batch;
}

void Scheduler::on_step_done(const ScheduledBatch& batch) {
  for (const auto& s : batch) {
    Sequence* seq = s.sequence;
    seq->num_computed_tokens += s.num_new_tokens;
    kv_.cache_full_blocks(seq->block_table, seq->tokens, seq->num_computed_tokens);
  }
}

void Scheduler::finish(Sequence* seq) {
  if (seq->status == SequenceStatus::Running) running_.erase(std::find(running_.begin(), running_.end(), seq));
  if (seq->status == SequenceStatus::Waiting) waiting_.erase(std::find(waiting_.begin(), waiting_.end(), seq));
  kv_.release(seq->block_table);
  seq->status = SequenceStatus::Finished;
  auto it = std::find_if(sequences_.begin(), sequences_.end(), [&](const auto& p) { return p.get() == seq; });
  sequences_.erase(it);
}

}  // namespace llmesh::engine
