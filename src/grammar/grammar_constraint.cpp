#include "grammar/grammar_constraint.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace llmesh::grammar {

namespace {

// Memoized states beyond this are dropped between steps (each costs 1 KiB of transitions).
constexpr size_t kMaxMemoizedStates = 16384;
// Start winding down when the tokens left barely cover the bytes still needed
// (each token is at least one byte, so this always finishes in time).
constexpr int64_t kWindDownMarginTokens = 4;
constexpr int64_t kCannotComplete = GrammarMatcher::kCannotComplete;
// Trie walks kept per constraint (each [vocab_size] int32: 600 KB on Qwen3).
constexpr size_t kMaxCachedWalks = 6;

}  // namespace

GrammarConstraint::GrammarConstraint(std::shared_ptr<const CompiledGrammar> grammar,
                                     std::shared_ptr<const VocabIndex> vocab)
    : vocab_(std::move(vocab)), matcher_(std::move(grammar)), state_(matcher_.initial_state()) {
  allowed_.assign(size_t(vocab_->vocab_size), 0);
  state_at_depth_.assign(size_t(vocab_->max_depth) + 1, GrammarMatcher::kDead);
}

bool GrammarConstraint::winding_down() const {
  return num_tokens_left_ <= matcher_.min_remaining_bytes(state_) + kWindDownMarginTokens;
}

const GrammarConstraint::WalkResult& GrammarConstraint::walk(int32_t state) {
  ++num_walk_lookups_;
  for (WalkResult& w : walks_) {
    if (w.state == state) {
      w.last_used = num_walk_lookups_;
      return w;
    }
  }
  WalkResult* slot = nullptr;
  if (walks_.size() < kMaxCachedWalks) {
    slot = &walks_.emplace_back();
    slot->remaining_bytes.resize(size_t(vocab_->vocab_size));
  } else {
    slot = &*std::min_element(walks_.begin(), walks_.end(),
                              [](const WalkResult& a, const WalkResult& b) { return a.last_used < b.last_used; });
  }
  slot->state = state;
  slot->last_used = num_walk_lookups_;
  int32_t* remaining = slot->remaining_bytes.data();
  std::fill(slot->remaining_bytes.begin(), slot->remaining_bytes.end(), -1);

  const VocabIndex& v = *vocab_;
  const VocabIndex::Node* nodes = v.nodes.data();
  int32_t* state_at = state_at_depth_.data();
  state_at[0] = state;
  for (int32_t i = 0, n = v.num_nodes(); i < n;) {
    const VocabIndex::Node& node = nodes[i];
    const int32_t s = matcher_.step(state_at[node.depth - 1], node.byte);
    if (s == GrammarMatcher::kDead) {
      i = node.skip;  // no token starting with this prefix can fit
      continue;
    }
    state_at[node.depth] = s;
    if (node.token >= 0) {
      const int64_t needed = matcher_.min_remaining_bytes(s);
      if (needed < kCannotComplete) remaining[node.token] = int32_t(std::min<int64_t>(needed, INT32_MAX));
    }
    ++i;
  }
  for (const auto& [node, token] : v.duplicate_tokens) remaining[token] = remaining[nodes[node].token];
  return *slot;
}

const std::vector<uint8_t>& GrammarConstraint::compute_allowed() {
  if (matcher_.num_states() > kMaxMemoizedStates) {
    state_ = matcher_.reset_keeping(state_);
    walks_.clear();  // state ids changed
  }
  // A token is allowed when the bytes still needed after it fit the tokens
  // left after it (a token is at least one byte). Winding down, it must also
  // need fewer bytes than now, so the output closes in time.
  const int64_t limit = winding_down() ? matcher_.min_remaining_bytes(state_) : num_tokens_left_;
  const int32_t limit_bytes = int32_t(std::min<int64_t>(limit, INT32_MAX));
  const int32_t* remaining = walk(state_).remaining_bytes.data();
  for (size_t i = 0; i < allowed_.size(); ++i) allowed_[i] = remaining[i] >= 0 && remaining[i] < limit_bytes;
  return allowed_;
}

void GrammarConstraint::mask_logits(std::span<float> logits) {
  const std::vector<uint8_t>& allowed = compute_allowed();
  const size_t n = std::min(logits.size(), allowed.size());
  for (size_t i = 0; i < n; ++i)
    if (!allowed[i]) logits[i] = -INFINITY;
  for (size_t i = n; i < logits.size(); ++i) logits[i] = -INFINITY;  // padding rows beyond the tokenizer
}

void GrammarConstraint::accept_token(int32_t token_id) {
  check(token_id >= 0 && token_id < vocab_->vocab_size, "constraint: token id {} is outside the vocabulary", token_id);
  const std::string& bytes = vocab_->token_bytes[size_t(token_id)];
  const int32_t next = bytes.empty() ? GrammarMatcher::kDead : matcher_.step(state_, bytes);
  check(next != GrammarMatcher::kDead, "constraint: token {} does not fit the output grammar", token_id);
  state_ = next;
}

bool GrammarConstraint::accept_bytes(std::string_view bytes) {
  const int32_t next = matcher_.step(state_, bytes);
  if (next == GrammarMatcher::kDead) return false;
  state_ = next;
  return true;
}

bool GrammarConstraint::is_complete() const { return matcher_.is_accepting(state_); }

bool GrammarConstraint::can_continue() const {
  if (!matcher_.has_continuation(state_)) return false;
  return !(is_complete() && winding_down());
}

}  // namespace llmesh::grammar
