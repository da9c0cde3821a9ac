#include "grammar/grammar_matcher.h"

#include <algorithm>

#include "core/error.h"

namespace llmesh::grammar {

namespace {

constexpr int64_t kInfiniteBytes = GrammarMatcher::kCannotComplete;  // a rule that never completes

uint64_t pair_key(int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }

}  // namespace

CompiledGrammar::CompiledGrammar(const Grammar& grammar) : byte_sets(grammar.byte_sets), root_rule(grammar.root_rule) {
  check(root_rule >= 0 && size_t(root_rule) < grammar.rules.size(), "grammar: no root rule");
  rule_starts.resize(grammar.rules.size());
  for (size_t r = 0; r < grammar.rules.size(); ++r) {
    for (const auto& alt : grammar.rules[r].alternatives) {
      rule_starts[r].push_back(int32_t(positions.size()));
      for (const Symbol& s : alt) {
        positions.push_back({s.kind == Symbol::Kind::Bytes ? Kind::Bytes : Kind::Rule, s.index});
      }
      positions.push_back({Kind::End, -1});
    }
  }
  // Fewest bytes each rule can match: a fixed point (rules are recursive).
  std::vector<int64_t> rule_min(grammar.rules.size(), kInfiniteBytes);
  auto sequence_min = [&](int32_t start) {
    int64_t total = 0;
    for (int32_t p = start; positions[size_t(p)].kind != Kind::End; ++p) {
      const Position& pos = positions[size_t(p)];
      total += pos.kind == Kind::Bytes ? 1 : rule_min[size_t(pos.index)];
      total = std::min(total, kInfiniteBytes);
    }
    return total;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < rule_starts.size(); ++r) {
      for (int32_t start : rule_starts[r]) {
        const int64_t m = sequence_min(start);
        if (m < rule_min[r]) rule_min[r] = m, changed = true;
      }
    }
  }
  min_bytes_from.assign(positions.size(), 0);
  for (size_t p = positions.size(); p-- > 0;) {
    const Position& pos = positions[p];
    if (pos.kind == Kind::End) continue;
    const int64_t own = pos.kind == Kind::Bytes ? 1 : rule_min[size_t(pos.index)];
    min_bytes_from[p] = std::min(own + min_bytes_from[p + 1], kInfiniteBytes);
  }
}

GrammarMatcher::GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar) : grammar_(std::move(grammar)) {
  std::vector<int32_t> none;
  intern_state(none, false);  // kDead
  std::vector<int32_t> stacks;
  bool accepting = false;
  expand_visited_.clear();
  for (int32_t start : grammar_->rule_starts[size_t(grammar_->root_rule)]) expand(start, -1, stacks, accepting);
  initial_state_ = intern_state(stacks, accepting);
}

int32_t GrammarMatcher::intern_node(int32_t position, int32_t parent) {
  auto [it, inserted] = node_ids_.try_emplace(pair_key(position, parent), int32_t(nodes_.size()));
  if (inserted) {
    const int64_t below = parent >= 0 ? nodes_[size_t(parent)].min_bytes : 0;
    nodes_.push_back({position, parent, std::min(grammar_->min_bytes_from[size_t(position)] + below, kInfiniteBytes)});
  }
  return it->second;
}

void GrammarMatcher::expand(int32_t position, int32_t parent, std::vector<int32_t>& stacks, bool& accepting) {
  const auto& positions = grammar_->positions;
  while (true) {
    const CompiledGrammar::Position& pos = positions[size_t(position)];
    if (pos.kind == CompiledGrammar::Kind::Bytes) {
      stacks.push_back(intern_node(position, parent));
      return;
    }
    // Rule entries and returns are where an empty-matching loop could spin: do each once per step.
    const uint64_t key = pair_key(position, parent);
    if (std::find(expand_visited_.begin(), expand_visited_.end(), key) != expand_visited_.end()) return;
    expand_visited_.push_back(key);
    if (pos.kind == CompiledGrammar::Kind::End) {
      if (parent < 0) {
        accepting = true;
        return;
      }
      position = nodes_[size_t(parent)].position;
      parent = nodes_[size_t(parent)].parent;
      continue;
    }
    // A rule: push the return position unless nothing follows (a tail call,
    // which keeps right-recursive repetitions from growing the stack).
    const int32_t after = position + 1;
    const int32_t frame =
        positions[size_t(after)].kind == CompiledGrammar::Kind::End ? parent : intern_node(after, parent);
    for (int32_t start : grammar_->rule_starts[size_t(pos.index)]) expand(start, frame, stacks, accepting);
    return;
  }
}

int32_t GrammarMatcher::intern_state(std::vector<int32_t>& stacks, bool accepting) {
  std::sort(stacks.begin(), stacks.end());
  stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
  uint64_t hash = accepting ? 0x9e3779b97f4a7c15ull : 0x51ed270b27a5d1c3ull;
  for (int32_t id : stacks) hash = (hash ^ uint64_t(uint32_t(id))) * 0x100000001b3ull;
  auto& bucket = state_buckets_[hash];
  for (int32_t candidate : bucket) {
    const State& s = states_[size_t(candidate)];
    if (s.accepting == accepting && s.num_stacks == stacks.size() &&
        std::equal(stacks.begin(), stacks.end(), state_stacks_.begin() + s.first_stack)) {
      return candidate;
    }
  }
  const auto id = int32_t(states_.size());
  int64_t min_bytes = accepting ? 0 : kInfiniteBytes;
  for (int32_t node : stacks) min_bytes = std::min(min_bytes, nodes_[size_t(node)].min_bytes);
  states_.push_back({uint32_t(state_stacks_.size()), uint32_t(stacks.size()), accepting, min_bytes});
  state_stacks_.insert(state_stacks_.end(), stacks.begin(), stacks.end());
  transitions_.resize(states_.size() * 256, -1);
  bucket.push_back(id);
  return id;
}

int32_t GrammarMatcher::compute_step(int32_t state, uint8_t byte) {
  std::vector<int32_t> next_stacks;
  bool accepting = false;
  expand_visited_.clear();
  const State s = states_[size_t(state)];
  for (uint32_t i = 0; i < s.num_stacks; ++i) {
    const StackNode node = nodes_[size_t(state_stacks_[s.first_stack + i])];
    const CompiledGrammar::Position& pos = grammar_->positions[size_t(node.position)];
    if (!grammar_->byte_sets[size_t(pos.index)].contains(byte)) continue;
    expand(node.position + 1, node.parent, next_stacks, accepting);
  }
  const int32_t next = next_stacks.empty() && !accepting ? kDead : intern_state(next_stacks, accepting);
  transitions_[size_t(state) * 256 + byte] = next;
  return next;
}

int32_t GrammarMatcher::reset_keeping(int32_t keep) {
  // Copy the kept stacks out as position chains, bottom last.
  std::vector<std::vector<int32_t>> chains;
  const State s = states_[size_t(keep)];
  for (uint32_t i = 0; i < s.num_stacks; ++i) {
    std::vector<int32_t> chain;
    for (int32_t n = state_stacks_[s.first_stack + i]; n >= 0; n = nodes_[size_t(n)].parent)
      chain.push_back(nodes_[size_t(n)].position);
    chains.push_back(std::move(chain));
  }
  const bool accepting = s.accepting;
  nodes_.clear();
  node_ids_.clear();
  states_.clear();
  state_stacks_.clear();
  state_buckets_.clear();
  transitions_.clear();
  std::vector<int32_t> none;
  intern_state(none, false);
  std::vector<int32_t> stacks;
  for (const auto& chain : chains) {
    int32_t parent = -1;
    for (size_t i = chain.size(); i-- > 0;) parent = intern_node(chain[i], parent);
    stacks.push_back(parent);
  }
  initial_state_ = -1;  // the old initial state is gone; callers hold only `keep`
  return intern_state(stacks, accepting);
}

}  // namespace llmesh::grammar
