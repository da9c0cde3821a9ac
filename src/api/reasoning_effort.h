// Reasoning control, the same in every protocol: the effort levels that
// chat's `reasoning_effort`, Responses' `reasoning.effort` and Anthropic's
// `output_config.effort` accept, and the reasoning budget they (or
// Anthropic's `thinking.budget_tokens`) set.
//
//   effort            thinking   reasoning budget (tokens)
//   off, none         off        -
//   minimal           on         256
//   low               on         1024
//   medium            on         4096
//   high              on         16384
//   xhigh, max        on         none
//
// Templates that take a level rather than a switch (gpt-oss's harmony: the
// system message's "Reasoning: low|medium|high") get `template_effort`:
// off, none, minimal and low -> low (gpt-oss always reasons; low is its
// least), medium -> medium, high, xhigh and max -> high. A request that names
// no effort leaves the template's default (medium).
//
// The budget is enforced by the engine (engine/reasoning_budget.h): when the
// model has reasoned that many tokens, the template's end-of-reasoning marker
// (</think>; harmony: the end of the analysis message and the final channel's
// header, text::kHarmonyEndOfAnalysis) is forced and the answer follows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "api/generation_request.h"
#include "engine/reasoning_budget.h"
#include "text/output_parser.h"
#include "text/tokenizer.h"

namespace llmesh::api {

struct ReasoningEffort {
  bool enable_thinking = false;
  std::optional<int64_t> budget_tokens;  // absent: no budget
  std::string template_effort;           // low | medium | high (see above)
};

// One of the levels above; ApiError 400 naming `param` otherwise (in the
// protocol's message style).
ReasoningEffort parse_reasoning_effort(const std::string& value, const std::string& param, ErrorStyle style);

// text::kHarmonyEndOfAnalysis as ids, its special tokens as theirs (empty when
// the vocabulary has no <|end|>).
std::vector<int32_t> harmony_end_of_analysis_ids(const text::Tokenizer& tokenizer);

// What the engine enforces for `request`: its budget between the parser's
// reasoning markers, when thinking is on and the model has such a block.
// Harmony: from the analysis channel's header to its <|end|>, whatever
// enable_thinking says (gpt-oss always reasons); at the budget the end of the
// analysis and the final channel's header are forced.
engine::ReasoningBudgetOptions reasoning_budget_options(const text::Tokenizer& tokenizer,
                                                        const text::OutputParserOptions& parser,
                                                        const GenerationRequest& request);

}  // namespace llmesh::api
