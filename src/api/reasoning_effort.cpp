#include "api/reasoning_effort.h"

#include <array>
#include <utility>

#include "api/api_error.h"

namespace llmesh::api {

namespace {

struct EffortLevel {
  const char* name;
  bool enable_thinking;
  int64_t budget_tokens;  // -1: none
  const char* template_effort;
};

constexpr std::array<EffortLevel, 8> kLevels = {{{"off", false, -1, "low"},
                                                 {"none", false, -1, "low"},
                                                 {"minimal", true, 256, "low"},
                                                 {"low", true, 1024, "low"},
                                                 {"medium", true, 4096, "medium"},
                                                 {"high", true, 16384, "high"},
                                                 {"xhigh", true, -1, "high"},
                                                 {"max", true, -1, "high"}}};

// A marker's ids: its own token when the vocabulary has one (Qwen3's </think>), else its encoding.
std::vector<int32_t> marker_ids(const text::Tokenizer& tokenizer, const std::string& marker) {
  if (const std::optional<int32_t> id = tokenizer.token_id(marker)) return {*id};
  return tokenizer.encode(marker);
}

// Bounds-checked: an id the tokenizer does not know is no text.
std::string bytes_of(const text::Tokenizer& tokenizer, int32_t id) {
  return id >= 0 && id < tokenizer.vocab_size() ? tokenizer.token_bytes(id) : std::string();
}

}  // namespace

std::vector<int32_t> harmony_end_of_analysis_ids(const text::Tokenizer& tokenizer) {
  // Each special token as its id (a tokenizer without them: none, and no budget is enforced).
  return tokenizer.token_id(std::string(text::kHarmonyEnd)) ? tokenizer.encode(text::kHarmonyEndOfAnalysis, true)
                                                            : std::vector<int32_t>();
}

ReasoningEffort parse_reasoning_effort(const std::string& value, const std::string& param, ErrorStyle style) {
  for (const EffortLevel& level : kLevels) {
    if (value != level.name) continue;
    ReasoningEffort effort;
    effort.enable_thinking = level.enable_thinking;
    if (level.budget_tokens >= 0) effort.budget_tokens = level.budget_tokens;
    effort.template_effort = level.template_effort;
    return effort;
  }
  constexpr const char* kAllowed = "off, none, minimal, low, medium, high, xhigh or max";
  if (style == ErrorStyle::Anthropic) fail_param(param, "{}: must be one of {}, got '{}'", param, kAllowed, value);
  fail_param(param, "'{}' must be one of {}; got '{}'", param, kAllowed, value);
}

engine::ReasoningBudgetOptions reasoning_budget_options(const text::Tokenizer& tokenizer,
                                                        const text::OutputParserOptions& parser,
                                                        const GenerationRequest& request) {
  engine::ReasoningBudgetOptions budget;
  if (parser.tool_call_format == text::ToolCallFormat::Harmony) {
    if (!request.reasoning_budget_tokens) return budget;
    budget.max_tokens = *request.reasoning_budget_tokens;
    budget.open_marker = std::string(text::kHarmonyChannel) + "analysis" + std::string(text::kHarmonyMessage);
    budget.close_marker = text::kHarmonyEnd;  // the model ending its analysis itself
    budget.close_ids = harmony_end_of_analysis_ids(tokenizer);
    budget.token_bytes = [&tokenizer](int32_t id) { return bytes_of(tokenizer, id); };
    return budget;
  }
  if (!request.reasoning_budget_tokens || !parser.parse_reasoning) return budget;
  // Thinking off: the template closed an empty block already, unless the prompt itself opened one.
  if (!request.enable_thinking && !parser.starts_in_reasoning) return budget;
  budget.max_tokens = *request.reasoning_budget_tokens;
  budget.open_marker = parser.reasoning_open;
  budget.close_marker = parser.reasoning_close;
  budget.close_ids = marker_ids(tokenizer, parser.reasoning_close);
  budget.token_bytes = [&tokenizer](int32_t id) { return bytes_of(tokenizer, id); };  // the model outlives requests
  budget.starts_in_reasoning = parser.starts_in_reasoning;
  return budget;
}

}  // namespace llmesh::api
