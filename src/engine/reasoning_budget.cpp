#include "engine/reasoning_budget.h"

#include <algorithm>

namespace llmesh::engine {

ReasoningBudget::ReasoningBudget(ReasoningBudgetOptions options) : options_(std::move(options)) {
  if (options_.enabled() && options_.starts_in_reasoning) state_ = State::Inside;
}

std::optional<int32_t> ReasoningBudget::forced_token() const {
  if (!options_.enabled()) return std::nullopt;
  if (state_ == State::Closing) return options_.close_ids[num_forced_];
  if (state_ == State::Inside && num_reasoning_tokens_ >= options_.max_tokens) return options_.close_ids.front();
  return std::nullopt;
}

void ReasoningBudget::scan_markers() {
  size_t pos = 0;
  for (;;) {
    const std::string& marker = state_ == State::Outside ? options_.open_marker : options_.close_marker;
    if (marker.empty()) break;
    const size_t found = tail_.find(marker, pos);
    if (found == std::string::npos) break;
    pos = found + marker.size();
    state_ = state_ == State::Outside ? State::Inside : State::Outside;
  }
  // Only a suffix shorter than the longest marker can still begin one.
  const size_t keep = std::max(options_.open_marker.size(), options_.close_marker.size()) - 1;
  const size_t from = std::max(pos, tail_.size() > keep ? tail_.size() - keep : 0);
  tail_.erase(0, from);
}

void ReasoningBudget::accept_token(int32_t token_id) {
  if (!options_.enabled()) return;
  if (state_ == State::Closing || (state_ == State::Inside && num_reasoning_tokens_ >= options_.max_tokens)) {
    // A forced close id: the block ends with the last one.
    if (++num_forced_ == options_.close_ids.size()) {
      state_ = State::Outside;
      num_forced_ = 0;
      tail_.clear();
    } else {
      state_ = State::Closing;
    }
    return;
  }
  const bool was_inside = state_ == State::Inside;
  tail_ += options_.token_bytes(token_id);
  scan_markers();
  if (was_inside && state_ == State::Inside) ++num_reasoning_tokens_;
}

}  // namespace llmesh::engine
