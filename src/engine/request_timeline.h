// Where one request's time went inside the engine: how long it waited for
// admission, each prefill chunk it ran (a long prompt runs in chunks of the
// step's token budget), and preemptions. Written by the engine thread, read by
// the API edge after the request ends (the console's request timeline); the
// API edge adds the first token and the end itself.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <vector>

namespace llmesh::engine {

struct TimelinePhase {
  enum class Kind { Queued, Prefill, Preempted };
  Kind kind;
  std::chrono::steady_clock::time_point start, end;  // equal for a mark (Preempted)
  int64_t num_tokens = 0;         // Prefill: tokens computed by the chunk
  int64_t num_cached_tokens = 0;  // a Prefill right after admission: tokens served from the prefix cache
};

class RequestTimeline {
 public:
  using Clock = std::chrono::steady_clock;
  // Bounds memory for a 1M-token prompt run in tiny chunks: later chunks merge into the last.
  static constexpr size_t kMaxPhases = 256;

  RequestTimeline() : submitted_(Clock::now()) {}

  // A step spanning [start, end) computed `num_tokens` of the request's
  // prompt (or, after a preemption, of its prompt and output) with
  // `num_cached_tokens` already there; `num_preemptions` so far.
  void on_prefill_step(Clock::time_point start, Clock::time_point end, int64_t num_tokens, int64_t num_cached_tokens,
                       int64_t num_preemptions);
  std::vector<TimelinePhase> phases() const;
  Clock::time_point submitted() const { return submitted_; }

 private:
  mutable std::mutex mu_;
  Clock::time_point submitted_;
  Clock::time_point last_end_;  // when the last chunk ended: a preempted request waits again from there
  std::vector<TimelinePhase> phases_;
  bool admitted_ = false;
  int64_t num_preemptions_ = 0;
};

}  // namespace llmesh::engine
