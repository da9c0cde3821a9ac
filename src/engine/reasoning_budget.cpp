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

bool ReasoningBudget::ends_with(const std::vector<int32_t>& marker) const {
  return !marker.empty() && recent_.size() >= marker.size() &&
         std::equal(marker.rbegin(), marker.rend(), recent_.rbegin());
}

void ReasoningBudget::accept_token(int32_t token_id) {
  if (!options_.enabled()) return;
  const size_t keep = std::max(options_.open_ids.size(), options_.close_ids.size());
  recent_.push_back(token_id);
  if (recent_.size() > keep) recent_.erase(recent_.begin());
  switch (state_) {
    case State::Outside:
      if (ends_with(options_.open_ids)) state_ = State::Inside;
      break;
    case State::Inside:
      if (num_reasoning_tokens_ >= options_.max_tokens) {  // the first forced id
        num_forced_ = 1;
        state_ = num_forced_ == options_.close_ids.size() ? State::Outside : State::Closing;
      } else if (ends_with(options_.close_ids)) {
        state_ = State::Outside;
      } else {
        ++num_reasoning_tokens_;
      }
      break;
    case State::Closing:
      if (++num_forced_ == options_.close_ids.size()) state_ = State::Outside;
      break;
  }
}

}  // namespace llmesh::engine
