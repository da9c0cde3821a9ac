#include "engine/scheduler.h"

#include <algorithm>

#include "core/error.h"

namespace llmesh {

Scheduler::Scheduler(const SchedulerOptions& options)
    : options_(options), pool_(options.num_blocks, options.block_size) {}

void Scheduler::add(std::unique_ptr<Sequence> sequence) {
  sequence->status = SequenceStatus::Waiting;
  waiting_.push_back(sequence.get());
  sequences_.push_back(std::move(sequence));
}

int64_t Scheduler::match_prefix(Sequence* seq) {
  if (!options_.enable_prefix_cache) return 0;
  const int64_t bs = options_.block_size;
  BlockHash parent = options_.cache_namespace;
  int64_t num_hit_blocks = 0;
  // At least one token must be left to compute: its logits sample the next token.
  const int64_t max_blocks = (seq->num_tokens() - 1) / bs;
  while (num_hit_blocks < max_blocks) {
    std::span<const int32_t> block_tokens(seq->tokens.data() + num_hit_blocks * bs, size_t(bs));
    const BlockHash hash = hash_block(parent, block_tokens);
    const int32_t block_id = pool_.lookup(hash, block_tokens);
    if (block_id < 0) break;
    pool_.share(block_id);
    seq->block_table.append(block_id);
    seq->block_hashes.push_back(hash);
    parent = hash;
    ++num_hit_blocks;
  }
  return num_hit_blocks * bs;
}

void Scheduler::preempt(Sequence* seq) {
  running_.erase(std::find(running_.begin(), running_.end(), seq));
  seq->block_table.release_all(pool_);
  seq->block_hashes.clear();
  seq->num_computed_tokens = 0;
  seq->status = SequenceStatus::Waiting;
  // Back into the queue at its arrival position (preempted sequences are older than most waiters).
  auto pos = std::find_if(waiting_.begin(), waiting_.end(),
                          [&](Sequence* w) { return w->arrival_order > seq->arrival_order; });
  waiting_.insert(pos, seq);
  ++counters_.num_preemptions;
}

std::vector<ScheduledSequence> Scheduler::schedule() {
  std::vector<ScheduledSequence> batch;
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
    while (!seq->block_table.reserve(pool_, seq->num_computed_tokens + n)) {
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
    if (!seq->block_table.reserve(pool_, seq->num_computed_tokens + n)) {
      // Not enough free blocks: give the hit blocks back and wait for running sequences to finish.
      seq->block_table.release_all(pool_);
      seq->block_hashes.clear();
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

void Scheduler::cache_full_blocks(Sequence* seq) {
  if (!options_.enable_prefix_cache) return;
  const int64_t bs = options_.block_size;
  const int64_t num_full = seq->num_computed_tokens / bs;
  while (int64_t(seq->block_hashes.size()) < num_full) {
    const int64_t j = int64_t(seq->block_hashes.size());
    const BlockHash parent = j == 0 ? options_.cache_namespace : seq->block_hashes.back();
    std::span<const int32_t> block_tokens(seq->tokens.data() + j * bs, size_t(bs));
    const BlockHash hash = hash_block(parent, block_tokens);
    pool_.cache(seq->block_table.block_ids()[size_t(j)], hash, block_tokens);
    seq->block_hashes.push_back(hash);
  }
}

void Scheduler::on_step_done(const std::vector<ScheduledSequence>& batch) {
  for (const auto& s : batch) {
    s.sequence->num_computed_tokens += s.num_new_tokens;
    cache_full_blocks(s.sequence);
  }
}

void Scheduler::finish(Sequence* seq) {
  if (seq->status == SequenceStatus::Running) running_.erase(std::find(running_.begin(), running_.end(), seq));
  if (seq->status == SequenceStatus::Waiting) waiting_.erase(std::find(waiting_.begin(), waiting_.end(), seq));
  seq->block_table.release_all(pool_);
  seq->status = SequenceStatus::Finished;
  auto it = std::find_if(sequences_.begin(), sequences_.end(), [&](const auto& p) { return p.get() == seq; });
  sequences_.erase(it);
}

}  // namespace llmesh
