// Ends a reasoning block when its token budget is spent. Inside the block
// (from the model's open marker, or from the first token when the prompt
// already opened it) every generated token counts; once `max_tokens` have
// been spent, the close marker's ids are forced one per step, and the
// answer follows as the model goes on from there. A block the model closes
// itself ends the count; a later block spends from the same budget.
//
// Markers are token id sequences (Qwen3's <think> / </think> are one special
// token each), matched on the generated ids: the engine sees no text.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace llmesh::engine {

struct ReasoningBudgetOptions {
  int64_t max_tokens = -1;           // reasoning tokens allowed; -1: no budget
  std::vector<int32_t> open_ids;     // the marker that opens a block (<think>)
  std::vector<int32_t> close_ids;    // the marker that closes it (</think>), forced at the budget
  bool starts_in_reasoning = false;  // the prompt opened the block: generation starts inside it

  bool enabled() const { return max_tokens >= 0 && !close_ids.empty(); }
};

class ReasoningBudget {
 public:
  explicit ReasoningBudget(ReasoningBudgetOptions options = {});

  // The id that must come next (the close marker being forced); none otherwise.
  std::optional<int32_t> forced_token() const;
  // Advances over the token that was generated.
  void accept_token(int32_t token_id);

  bool in_reasoning() const { return state_ != State::Outside; }
  int64_t num_reasoning_tokens() const { return num_reasoning_tokens_; }

 private:
  enum class State { Outside, Inside, Closing };
  // True when the generated ids end with `marker`.
  bool ends_with(const std::vector<int32_t>& marker) const;

  ReasoningBudgetOptions options_;
  State state_ = State::Outside;
  int64_t num_reasoning_tokens_ = 0;
  size_t num_forced_ = 0;       // Closing: close ids emitted so far
  std::vector<int32_t> recent_;  // the last few ids, as long as the longest marker
};

}  // namespace llmesh::engine
