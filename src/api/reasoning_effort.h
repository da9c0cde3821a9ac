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
// The budget is enforced by the engine (engine/reasoning_budget.h): when the
// model has reasoned that many tokens, the template's end-of-reasoning marker
// (</think>) is forced and the answer follows.
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
};

// One of the levels above; ApiError 400 naming `param` otherwise (in the
// protocol's message style).
ReasoningEffort parse_reasoning_effort(const std::string& value, const std::string& param, ErrorStyle style);

// What the engine enforces for `request`: its budget between the parser's
// reasoning markers, when thinking is on and the model has such a block.
engine::ReasoningBudgetOptions reasoning_budget_options(const text::Tokenizer& tokenizer,
                                                        const text::OutputParserOptions& parser,
                                                        const GenerationRequest& request);

}  // namespace llmesh::api
