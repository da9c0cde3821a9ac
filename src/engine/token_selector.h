// Turns a sequence's logits row into its next token and decides whether the
// request ends there: constraint masking, min_tokens, sampling, logprobs, and
// the stop rules (EOS, max_tokens, the context limit, a complete grammar, a
// repetition loop) and the reasoning budget (its close marker forced when spent).
// Engine thread only; the engine applies the Selection (events, finish).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/sequence.h"

namespace llmesh::engine {

struct Selection {
  // The sampled token (already appended to seq.tokens); its finish_reason
  // is set when it ends the request.
  std::optional<TokenEvent> token;
  // End with an EOS event after `token` (or instead of one): the constraint
  // is complete and nothing can extend it.
  bool then_eos = false;
  // The request fails here (the constraint allows no token, or rejected one).
  std::string error;
};

class TokenSelector {
 public:
  TokenSelector(std::vector<int32_t> eos_token_ids, int64_t context_tokens)
      : eos_token_ids_(std::move(eos_token_ids)), context_tokens_(context_tokens) {}

  // `logits` ([vocab]) is modified in place.
  Selection select(Sequence& seq, std::span<float> logits);

  const std::vector<int32_t>& eos_token_ids() const { return eos_token_ids_; }

 private:
  bool is_eos(int32_t id) const;
  // Applies the request's constraint; EOS stays possible only when the output
  // is complete (and min_tokens is reached). False when no token is left.
  bool mask_for_constraint(Sequence& seq, std::span<float> logits, bool allow_stop);
  void fill_logprobs(const Sequence& seq, TokenEvent& ev) const;

  std::vector<int32_t> eos_token_ids_;
  int64_t context_tokens_;
  std::vector<std::pair<int32_t, float>> end_logits_;  // scratch: EOS logits held back from a constraint's mask
};

}  // namespace llmesh::engine
