#include "engine/repetition_guard.h"

namespace llmesh::engine {

RepetitionGuard::RepetitionGuard(RepetitionGuardOptions options) : options_(options) {
  if (!options_.enabled()) return;
  recent_.assign(size_t(options_.max_period), -1);
  run_.assign(size_t(options_.max_period) + 1, 0);
}

bool RepetitionGuard::push(int32_t token_id) {
  loop_period_ = 0;
  if (!options_.enabled()) return false;
  const int64_t n = num_tokens_;  // this token's position
  const int64_t max_period = options_.max_period;
  for (int64_t p = 1; p <= max_period; ++p) {
    if (n < p) {
      run_[size_t(p)] = 0;
      continue;
    }
    const bool same = recent_[size_t((n - p) % max_period)] == token_id;
    run_[size_t(p)] = same ? run_[size_t(p)] + 1 : 0;
    // The last run + p tokens repeat a p-token span; two copies at least.
    const int64_t run = run_[size_t(p)];
    if (loop_period_ == 0 && run >= p && run + p >= options_.window_tokens) loop_period_ = int32_t(p);
  }
  recent_[size_t(n % max_period)] = token_id;
  ++num_tokens_;
  return loop_period_ > 0;
}

}  // namespace llmesh::engine
