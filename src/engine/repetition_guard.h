// Detects a generation stuck in a loop: the last `window_tokens` generated
// tokens are one span of period p (1 <= p <= max_period) repeated, i.e.
// t[i] == t[i - p] for every position of the window past its first p tokens,
// and the window holds at least two copies of the span.
//
// For each period p the guard keeps run[p], how many of the latest tokens in a
// row equal the token p positions before them. The last L tokens have period p
// exactly when run[p] >= L - p, so a new token costs O(max_period) compares and
// nothing is ever rescanned: a long generation pays the same per token as a
// short one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace llmesh::engine {

struct RepetitionGuardOptions {
  int64_t window_tokens = 0;  // K: how many of the last tokens a loop must cover; 0: off
  int32_t max_period = 0;     // P: the longest repeated span looked for; 0: off

  bool enabled() const { return window_tokens > 0 && max_period > 0; }
};

class RepetitionGuard {
 public:
  explicit RepetitionGuard(RepetitionGuardOptions options = {});

  // Adds the next generated token; true when the output now ends in a loop
  // (and from then on, while the loop goes on). Always false when disabled.
  bool push(int32_t token_id);
  // The shortest period of the loop the last push() found (0: none).
  int32_t loop_period() const { return loop_period_; }

 private:
  RepetitionGuardOptions options_;
  std::vector<int32_t> recent_;  // [max_period] ring: token n sits at n % max_period
  std::vector<int64_t> run_;     // [max_period + 1] run_[p] for p >= 1
  int64_t num_tokens_ = 0;
  int32_t loop_period_ = 0;
};

}  // namespace llmesh::engine
