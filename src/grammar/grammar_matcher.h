// Runs a Grammar over bytes as a pushdown automaton whose configurations are
// interned and whose transitions are memoized — a DFA over sets of parse
// stacks, built lazily as the input (and the vocabulary walk) needs it.
//
//   stack  : the positions still to match, innermost first; its top is always
//            a byte class. Stacks share tails (a persistent tree of nodes).
//   state  : the set of stacks the bytes read so far may have led to, plus
//            whether the grammar may end here ("accepting"). State 0 is dead.
//   step(state, byte) -> state : computed once, then a table lookup. The
//            vocabulary walk in token_mask.h calls it once per trie node.
//
// Each state also knows the fewest bytes that complete a sentence from it
// (min_remaining_bytes), which lets the constraint steer to a complete output
// when the token budget runs out.
//
// Not thread-safe: one matcher per request (the compiled grammar is shared).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "grammar/grammar.h"

namespace llmesh::grammar {

// The grammar flattened into positions, immutable and shareable.
struct CompiledGrammar {
  enum class Kind : uint8_t { Bytes, Rule, End };
  struct Position {
    Kind kind;
    int32_t index;  // byte set (Bytes) or rule (Rule); unused for End
  };
  std::vector<Position> positions;                // every alternative's symbols, then End
  std::vector<std::vector<int32_t>> rule_starts;  // [rules] first position of each alternative
  std::vector<ByteSet> byte_sets;
  std::vector<int64_t> min_bytes_from;  // [positions] fewest bytes from here to the End
  int32_t root_rule = 0;

  explicit CompiledGrammar(const Grammar& grammar);
};

class GrammarMatcher {
 public:
  static constexpr int32_t kDead = 0;
  static constexpr int64_t kCannotComplete = int64_t(1) << 40;  // min_remaining_bytes of a trapped state

  explicit GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar);

  int32_t initial_state() const { return initial_state_; }
  // The state after `byte`; kDead when the grammar cannot read it.
  int32_t step(int32_t state, uint8_t byte) {
    const int32_t next = transitions_[size_t(state) * 256 + byte];
    return next >= 0 ? next : compute_step(state, byte);
  }
  int32_t step(int32_t state, std::string_view bytes) {
    for (char c : bytes) {
      if (state == kDead) break;
      state = step(state, uint8_t(c));
    }
    return state;
  }

  bool is_accepting(int32_t state) const { return states_[size_t(state)].accepting; }
  bool has_continuation(int32_t state) const { return states_[size_t(state)].num_stacks > 0; }
  int64_t min_remaining_bytes(int32_t state) const { return states_[size_t(state)].min_remaining_bytes; }

  size_t num_states() const { return states_.size(); }
  // Drops every memoized state except `keep`, which gets a new id (returned).
  // Bounds memory on long generations over deeply nested grammars.
  int32_t reset_keeping(int32_t keep);

 private:
  struct StackNode {
    int32_t position;   // the top: a Bytes position; a frame below: where to continue after the rule returns
    int32_t parent;     // -1: the bottom
    int64_t min_bytes;  // fewest bytes to empty this stack
  };
  struct State {
    uint32_t first_stack;  // into state_stacks_
    uint32_t num_stacks;
    bool accepting;
    int64_t min_remaining_bytes;
  };

  int32_t compute_step(int32_t state, uint8_t byte);
  // Adds the stacks reached by continuing at `position` above `parent`.
  void expand(int32_t position, int32_t parent, std::vector<int32_t>& stacks, bool& accepting);
  int32_t intern_node(int32_t position, int32_t parent);
  int32_t intern_state(std::vector<int32_t>& stacks, bool accepting);

  std::shared_ptr<const CompiledGrammar> grammar_;
  std::vector<StackNode> nodes_;
  std::unordered_map<uint64_t, int32_t> node_ids_;  // (position, parent) -> node
  std::vector<State> states_;
  std::vector<int32_t> state_stacks_;                                 // concatenated sorted node ids of every state
  std::unordered_map<uint64_t, std::vector<int32_t>> state_buckets_;  // hash of a state's content -> candidates
  std::vector<int32_t> transitions_;                                  // [num_states * 256], -1 = not computed yet
  std::vector<uint64_t> expand_visited_;  // scratch: (position, parent) pairs seen in one expand
  int32_t initial_state_ = kDead;
};

}  // namespace llmesh::grammar
