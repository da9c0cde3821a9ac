#include "engine/token_selector.h"

#include <algorithm>
#include <cmath>

namespace llmesh::engine {

bool TokenSelector::is_eos(int32_t id) const {
  return std::find(eos_token_ids_.begin(), eos_token_ids_.end(), id) != eos_token_ids_.end();
}

bool TokenSelector::mask_for_constraint(Sequence& seq, std::span<float> logits, bool allow_stop) {
  TokenConstraint& constraint = *seq.request.constraint;
  end_logits_.clear();
  for (int32_t id : eos_token_ids_) end_logits_.emplace_back(id, logits[size_t(id)]);
  constraint.mask_logits(logits);
  for (auto& [id, value] : end_logits_) logits[size_t(id)] = -INFINITY;
  if (constraint.is_complete() && allow_stop) {
    for (auto& [id, value] : end_logits_) logits[size_t(id)] = value;
  }
  return std::any_of(logits.begin(), logits.end(), [](float x) { return x > -INFINITY; });
}

void TokenSelector::fill_logprobs(const Sequence& seq, TokenEvent& ev) const {
  const int32_t k_top = seq.request.num_top_logprobs;
  if (k_top < 0) return;
  const auto& lp = seq.sampler.last_logprobs();
  ev.logprob = lp[size_t(ev.token_id)];
  if (k_top == 0) return;
  std::vector<int32_t> top(lp.size());
  for (size_t i = 0; i < top.size(); ++i) top[i] = int32_t(i);
  const size_t k = std::min(size_t(k_top), top.size());
  std::partial_sort(top.begin(), top.begin() + long(k), top.end(),
                    [&](int32_t a, int32_t b) { return lp[size_t(a)] > lp[size_t(b)]; });
  for (size_t i = 0; i < k; ++i) ev.top_logprobs.push_back({top[i], lp[size_t(top[i])]});
}

Selection TokenSelector::select(Sequence& seq, std::span<float> logits) {
  const Request& r = seq.request;
  TokenConstraint* constraint = r.constraint.get();
  Selection result;
  seq.sampler.set_keep_logprobs(r.num_top_logprobs >= 0);
  const bool allow_stop = seq.num_output_tokens() >= r.min_tokens;
  if (constraint) {
    constraint->set_tokens_left(std::min(r.max_tokens - seq.num_output_tokens(), context_tokens_ - seq.num_tokens()));
    if (constraint->is_complete() && !constraint->can_continue()) {  // e.g. an empty grammar
      result.then_eos = true;
      return result;
    }
  }
  if (const std::optional<int32_t> forced = seq.reasoning_budget.forced_token()) {
    // The reasoning budget is spent: its close marker is the only choice (the
    // constraint's grammar admits it: reasoning is free text until the marker).
    std::fill(logits.begin(), logits.end(), -INFINITY);
    logits[size_t(*forced)] = 0.0f;
  } else if (constraint) {
    if (!mask_for_constraint(seq, logits, allow_stop)) {
      result.error = "the output constraint allows no token here";
      return result;
    }
  } else if (!allow_stop) {  // min_tokens: EOS cannot be sampled yet
    for (int32_t id : eos_token_ids_) logits[size_t(id)] = -INFINITY;
  }
  std::span<const int32_t> prompt(seq.tokens.data(), size_t(seq.num_prompt_tokens));
  std::span<const int32_t> output(seq.tokens.data() + seq.num_prompt_tokens, size_t(seq.num_output_tokens()));
  const int32_t id = seq.sampler.sample(logits, prompt, output);
  seq.tokens.push_back(id);
  seq.reasoning_budget.accept_token(id);

  TokenEvent ev;
  ev.token_id = id;
  fill_logprobs(seq, ev);
  // Under a constraint, EOS was sampleable only when the output was complete.
  const bool eos = is_eos(id);
  const bool constrained_end = constraint && eos;
  if (constraint && !constrained_end) {
    try {
      constraint->accept_token(id);
    } catch (const std::exception& e) {  // a broken constraint fails its own request, not the batch
      result.error = e.what();
      return result;
    }
  }
  if (constrained_end || (allow_stop && eos && !r.ignore_eos)) {
    ev.finish_reason = FinishReason::Eos;
  } else if (seq.num_output_tokens() >= r.max_tokens || seq.num_tokens() >= context_tokens_) {
    ev.finish_reason = FinishReason::Length;
  } else if (seq.loop_guard.push(id)) {
    ev.finish_reason = FinishReason::Repetition;
  }
  // The grammar is done: end now rather than run another step.
  result.then_eos = ev.finish_reason == FinishReason::None && constraint && constraint->is_complete() &&
                    !constraint->can_continue();
  result.token = std::move(ev);
  return result;
}

}  // namespace llmesh::engine
