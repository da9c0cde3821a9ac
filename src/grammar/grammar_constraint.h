// A TokenConstraint that lets through exactly the tokens whose bytes keep the
// output a prefix of some sentence of a grammar.
//
// mask_logits() walks the vocabulary trie (vocab_index.h) from the current
// matcher state, one memoized transition per trie node, skipping subtrees
// whose prefix is dead: O(trie nodes reachable), 2-5 ms on Qwen3's 151K
// vocabulary inside a string, much less in structural states. The walk's
// result is cached per state, so a state seen again (every token inside a
// JSON string) costs one pass over the vocabulary (~0.1 ms).
//
// Budget: when the engine says only a few tokens are left (set_tokens_left),
// the constraint allows only tokens that bring the output strictly closer to
// a complete sentence (fewer bytes still needed), so it closes every open
// string/array/object in time instead of being cut off mid-value.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/token_constraint.h"
#include "grammar/grammar_matcher.h"
#include "grammar/vocab_index.h"

namespace llmesh::grammar {

class GrammarConstraint : public engine::TokenConstraint {
 public:
  GrammarConstraint(std::shared_ptr<const CompiledGrammar> grammar, std::shared_ptr<const VocabIndex> vocab);

  void mask_logits(std::span<float> logits) override;
  void accept_token(int32_t token_id) override;
  bool is_complete() const override;
  bool can_continue() const override;
  void set_tokens_left(int64_t num_tokens_left) override { num_tokens_left_ = num_tokens_left; }

  // [vocab_size] 1 = allowed next; what mask_logits applies.
  const std::vector<uint8_t>& compute_allowed();
  // True when the budget forces the output to wind down now.
  bool winding_down() const;
  int64_t min_remaining_bytes() const { return matcher_.min_remaining_bytes(state_); }
  // Advances over raw bytes (tests); false (state unchanged) when the grammar rejects them.
  bool accept_bytes(std::string_view bytes);

 private:
  std::shared_ptr<const VocabIndex> vocab_;
  GrammarMatcher matcher_;
  int32_t state_;
  int64_t num_tokens_left_ = INT64_MAX;
  // What one trie walk found for a state: for each token, the bytes still
  // needed after it (-1: the token does not fit). Walks are the expensive part
  // and states repeat (every token inside a JSON string returns to the same
  // one), so the last few are kept; the budget rules are applied afterwards.
  struct WalkResult {
    int32_t state = -1;
    uint64_t last_used = 0;
    std::vector<int32_t> remaining_bytes;  // [vocab_size]
  };
  const WalkResult& walk(int32_t state);

  std::vector<uint8_t> allowed_;         // [vocab_size]
  std::vector<int32_t> state_at_depth_;  // scratch for the trie walk
  std::vector<WalkResult> walks_;        // at most kMaxCachedWalks
  uint64_t num_walk_lookups_ = 0;
};

}  // namespace llmesh::grammar
