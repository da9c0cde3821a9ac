#include "engine/request_timeline.h"

namespace llmesh::engine {

void RequestTimeline::on_prefill_step(Clock::time_point start, Clock::time_point end, int64_t num_tokens,
                                      int64_t num_cached_tokens, int64_t num_preemptions) {
  using Kind = TimelinePhase::Kind;
  std::lock_guard lock(mu_);
  const bool readmitted = admitted_ && num_preemptions != num_preemptions_;
  if (readmitted) phases_.push_back({Kind::Preempted, last_end_, last_end_});
  const bool admission = !admitted_ || readmitted;
  if (admission) phases_.push_back({Kind::Queued, admitted_ ? last_end_ : submitted_, start});
  admitted_ = true;
  num_preemptions_ = num_preemptions;
  if (phases_.size() >= kMaxPhases && phases_.back().kind == Kind::Prefill) {
    phases_.back().end = end;
    phases_.back().num_tokens += num_tokens;
  } else {
    phases_.push_back({Kind::Prefill, start, end, num_tokens, admission ? num_cached_tokens : 0});
  }
  last_end_ = end;
}

std::vector<TimelinePhase> RequestTimeline::phases() const {
  std::lock_guard lock(mu_);
  return phases_;
}

}  // namespace llmesh::engine
