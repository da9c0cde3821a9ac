// What the API edge hands the engine (Request, immutable once submitted) and
// what streams back (TokenEvent). The engine sees token ids only: templates,
// tokenization, stop strings and protocol shapes live at the API edge.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/finish_reason.h"
#include "engine/reasoning_budget.h"
#include "engine/repetition_guard.h"
#include "engine/sampling_params.h"
#include "engine/token_constraint.h"

namespace llmesh::engine {

struct Request {
  std::string request_id;
  std::vector<int32_t> prompt_ids;
  SamplingParams sampling;
  int64_t max_tokens = 256;     // already clamped by the API edge to what fits the context
  int64_t min_tokens = 0;       // EOS/stop ids are ignored before this many tokens
  bool ignore_eos = false;
  int32_t num_top_logprobs = -1;        // -1: no logprobs; 0: the sampled token's; k: plus top k
  bool return_first_logits = false;     // the first event carries the raw logits at the last prompt position
  std::shared_ptr<TokenConstraint> constraint;  // null: unconstrained
  // Keep the prompt's cached blocks this long after the request ends (a
  // client's cache_control TTL): evicted after every unpinned block. 0: LRU only.
  int64_t cache_ttl_seconds = 0;
  ReasoningBudgetOptions reasoning_budget;      // forces the end of reasoning after a budget (default: none)
  RepetitionGuardOptions loop_guard;            // ends a generation stuck in a loop (default: off)
};

struct TopLogprob {
  int32_t token_id;
  float logprob;
};

// One event per generated token; the last one of a request has finish_reason != None.
// An event with a non-empty `error` ends the request without a token.
struct TokenEvent {
  int32_t token_id = -1;
  float logprob = 0.0f;
  std::vector<TopLogprob> top_logprobs;
  FinishReason finish_reason = FinishReason::None;
  std::string error;
  // Set on the first event: how the prompt was served.
  int64_t num_prompt_tokens = 0;
  int64_t num_cached_tokens = 0;  // prompt tokens whose K/V came from the prefix cache
  std::vector<float> first_logits;  // [vocab], when the request asked for them
};

}  // namespace llmesh::engine
