// Engine-side state of one request (the API-side Request stays immutable).
// Lifecycle comments say which step sets each mutable field.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/request.h"
#include "engine/request_handle.h"
#include "engine/sampler.h"
#include "kv/block_pool.h"

namespace llmesh::engine {

enum class SequenceStatus { Waiting, Running, Finished };

struct Sequence {
  Sequence(Request r, std::shared_ptr<RequestHandle> h, int64_t block_size, uint64_t arrival)
      : request(std::move(r)),
        handle(std::move(h)),
        tokens(request.prompt_ids),
        num_prompt_tokens(int64_t(request.prompt_ids.size())),
        block_table(block_size),
        sampler(request.sampling),
        reasoning_budget(request.reasoning_budget),
        loop_guard(request.loop_guard),
        arrival_order(arrival) {}

  Request request;
  std::shared_ptr<RequestHandle> handle;
  std::vector<int32_t> tokens;       // prompt, then generated tokens      // grows at sampling
  int64_t num_prompt_tokens;
  int64_t num_computed_tokens = 0;  // tokens whose K/V are in the pool  // set at schedule (hit) and step end
  int64_t num_cached_tokens = -1;   // prompt tokens hit in the prefix cache at first admission (-1: not yet)
  kv::BlockTable block_table;       // set at schedule; emptied at preemption and finish
  Sampler sampler;
  ReasoningBudget reasoning_budget;  // advances at sampling
  RepetitionGuard loop_guard;        // advances at sampling
  SequenceStatus status = SequenceStatus::Waiting;
  int64_t num_preemptions = 0;       // incremented at preemption
  uint64_t arrival_order;            // FIFO order across preemptions
  bool first_event_sent = false;
  std::vector<float> first_logits;   // kept from the first sampling step until the first event (return_first_logits)

  int64_t num_tokens() const { return int64_t(tokens.size()); }
  int64_t num_output_tokens() const { return num_tokens() - num_prompt_tokens; }
};

}  // namespace llmesh::engine
