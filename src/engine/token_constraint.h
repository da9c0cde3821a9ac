// Restricts which token may come next (structured output: a grammar built
// from a JSON schema, forced tool calls). One object per request, created at
// the API edge and afterwards used only by the engine thread.
#pragma once

#include <cstdint>
#include <span>

namespace llmesh::engine {

class TokenConstraint {
 public:
  virtual ~TokenConstraint() = default;

  // Sets the logits ([vocab]) of every token that may not come next to -inf.
  // End-of-sequence ids are the engine's business: it allows them only when
  // is_complete() and ends the request when nothing else is allowed.
  virtual void mask_logits(std::span<float> logits) = 0;
  // Advances over a sampled token that mask_logits() allowed.
  virtual void accept_token(int32_t token_id) = 0;
  // True when what was generated so far is a complete sentence of the grammar.
  virtual bool is_complete() const = 0;
  // True when some token can still extend the output.
  virtual bool can_continue() const = 0;
  // Called by the engine before mask_logits(): how many more tokens the
  // request may generate (max_tokens, context). A constraint may use it to
  // steer to a complete output before the budget runs out.
  virtual void set_tokens_left(int64_t num_tokens_left) { (void)num_tokens_left; }
};

}  // namespace llmesh::engine
