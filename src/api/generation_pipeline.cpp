#include "api/generation_pipeline.h"

#include <fmt/ranges.h>

#include "api/api_error.h"
#include "api/output_options.h"
#include "api/reasoning_effort.h"
#include "core/error.h"
#include "core/log.h"

namespace llmesh::api {

namespace {

// Output the model may always produce: what the context and the KV pool leave beside the prompt.
int64_t room_for_output(const ServerContext& ctx, int64_t num_prompt_tokens) {
  int64_t room = ctx.context_tokens() - num_prompt_tokens;
  // Within the KV pool too, so a request without max_tokens never fails for it.
  const int64_t kv_room = ctx.engine->kv_cache_tokens() - num_prompt_tokens;
  if (kv_room >= 1) room = std::min(room, kv_room);
  return room;
}

[[noreturn]] void fail_output_too_long(const ServerContext& ctx, int64_t num_prompt, int64_t requested,
                                       const OutputLimitPolicy& policy) {
  const int64_t context = ctx.context_tokens();
  const std::string& input = policy.input_name;
  throw ApiError(
      400, "invalid_request_error",
      fmt::format("This model's maximum context length is {} tokens, but {} tokens were requested "
                  "({} in the {} + {} for {}). Shorten the {} or lower {}.",
                  context, num_prompt + requested, num_prompt, input, requested, policy.param, input, policy.param),
      policy.param, "context_length_exceeded");
}

[[noreturn]] void fail_no_room(const ServerContext& ctx, int64_t num_prompt, const OutputLimitPolicy& policy) {
  const int64_t context = ctx.context_tokens();
  if (policy.kind == OutputLimitPolicy::Kind::Clamp) {
    // The message Claude Code recognizes (and compacts the conversation on).
    throw ApiError(400, "invalid_request_error",
                   fmt::format("prompt is too long: {} tokens > {} maximum", num_prompt, context - 1));
  }
  throw ApiError(400, "invalid_request_error",
                 fmt::format("This model's maximum context length is {} tokens, but the prompt has {} tokens, "
                             "leaving no room for output.",
                             context, num_prompt),
                 "messages", "context_length_exceeded");
}

// The engine request for a prompt whose output limit is already fitted.
// The loop guard a request gets: the endpoint's default, switched and tuned by its loop_guard.
engine::RepetitionGuardOptions loop_guard_options(const ServerOptions& options, const LoopGuardRequest& guard,
                                                  bool on_by_default) {
  if (!guard.enabled.value_or(on_by_default)) return {};
  return {guard.window_tokens.value_or(options.loop_guard_tokens),
          guard.max_period.value_or(options.loop_guard_max_period)};
}

engine::Request engine_request(const ServerContext& ctx, std::vector<int32_t> prompt_ids,
                               const GenerationParams& params, int64_t max_tokens, bool loop_guard_by_default) {
  engine::Request request;
  request.prompt_ids = std::move(prompt_ids);
  request.sampling = params.sampling(ctx.model->files.generation);
  request.max_tokens = max_tokens;
  request.min_tokens = std::min(params.min_tokens, max_tokens);
  request.ignore_eos = params.ignore_eos;
  request.num_top_logprobs = params.logprobs ? params.top_logprobs : -1;
  request.cache_ttl_seconds = params.cache_ttl_seconds;
  request.loop_guard = loop_guard_options(ctx.options, params.loop_guard, loop_guard_by_default);
  return request;
}

PreparedGeneration prepare_tokens(const ServerContext& ctx, std::vector<int32_t> prompt_ids,
                                  const GenerationParams& params, const OutputLimitPolicy& policy,
                                  bool loop_guard_by_default) {
  const int64_t num_prompt = int64_t(prompt_ids.size());
  if (num_prompt == 0) fail_param("messages", "the prompt is empty after tokenization");
  const int64_t max_tokens = fit_output_tokens(ctx, num_prompt, params.max_tokens, policy);
  PreparedGeneration prepared;
  prepared.engine_request = engine_request(ctx, std::move(prompt_ids), params, max_tokens, loop_guard_by_default);
  prepared.pipeline.stop_strings = params.stop;
  prepared.pipeline.collect_logprobs = params.logprobs;
  return prepared;
}

}  // namespace

text::ChatTemplateOptions template_options(const GenerationRequest& request, bool add_generation_prompt) {
  text::ChatTemplateOptions options;
  options.add_generation_prompt = add_generation_prompt;
  // Always explicit: a template that knows the switch must not fall back to its own default.
  options.enable_thinking = request.enable_thinking;
  options.reasoning_effort = request.reasoning_effort;
  options.extra = request.template_kwargs;
  return options;
}

namespace {

// The rendered conversation, then `lead` (a harmony header the output continues) and the prefill.
std::string render_with_lead(const text::ChatTemplate& chat_template, const GenerationRequest& request,
                             bool add_generation_prompt, const std::string& lead) {
  try {
    return chat_template.render(request.messages, request.tools, template_options(request, add_generation_prompt)) +
           lead + request.assistant_prefill;
  } catch (const Error& e) {
    const char* field = request.error_style == ErrorStyle::Anthropic ? "messages: " : "";
    throw ApiError(400, "invalid_request_error", fmt::format("{}the chat template failed: {}", field, e.what()),
                   "messages");
  }
}

// Harmony: a constrained output or a prefill continues a message the prompt opens (its header has
// special tokens no grammar writes, and a prefill is the answer's beginning): see harmony_prompt_lead.
std::string harmony_lead(const GenerationRequest& request) {
  std::string lead = harmony_prompt_lead(request.constraint);
  if (lead.empty() && !request.assistant_prefill.empty())
    lead = std::string(text::kHarmonyChannel) + "final" + std::string(text::kHarmonyMessage);
  return lead;
}

}  // namespace

std::string render_prompt(const text::ChatTemplate& chat_template, const GenerationRequest& request,
                          bool add_generation_prompt) {
  return render_with_lead(chat_template, request, add_generation_prompt, "");
}

std::string render_prompt(const ServerContext& ctx, const GenerationRequest& request, bool add_generation_prompt) {
  // Mistral's templates refuse ids that are not 9 alphanumerics, and agents send back their own.
  if (ctx.model->chat_template && model_tool_call_format(ctx) == text::ToolCallFormat::Mistral) {
    GenerationRequest mistral = request;
    if (text::use_mistral_call_ids(mistral.messages))
      return render_prompt(*ctx.model->chat_template, mistral, add_generation_prompt);
  }
  if (!ctx.model->chat_template) {
    if (request.error_style == ErrorStyle::Anthropic) {
      throw ApiError(400, "invalid_request_error",
                     "This model has no chat template, so it cannot serve /v1/messages; use /v1/completions");
    }
    throw ApiError(400, "invalid_request_error",
                   "This model has no chat template; use /v1/completions with a raw prompt", "messages");
  }
  if (add_generation_prompt && model_tool_call_format(ctx) == text::ToolCallFormat::Harmony)
    return render_with_lead(*ctx.model->chat_template, request, add_generation_prompt, harmony_lead(request));
  return render_prompt(*ctx.model->chat_template, request, add_generation_prompt);
}

PreparedPrompt tokenize_prompt(const ServerContext& ctx, const GenerationRequest& request, bool add_generation_prompt) {
  PreparedPrompt prompt;
  prompt.text = render_prompt(ctx, request, add_generation_prompt);
  prompt.ids = ctx.model->encode_prompt(prompt.text);
  return prompt;
}

int64_t fit_output_tokens(const ServerContext& ctx, int64_t num_prompt_tokens, std::optional<int64_t> requested,
                          const OutputLimitPolicy& policy) {
  if (requested && policy.kind == OutputLimitPolicy::Kind::Reject) {
    if (num_prompt_tokens + *requested > ctx.context_tokens()) {
      fail_output_too_long(ctx, num_prompt_tokens, *requested, policy);
    }
    return *requested;
  }
  if (num_prompt_tokens >= ctx.context_tokens()) fail_no_room(ctx, num_prompt_tokens, policy);
  const int64_t room = room_for_output(ctx, num_prompt_tokens);
  return requested ? std::min(*requested, room) : room;
}

ReasoningPrefix reasoning_prefix(const text::OutputParserOptions& parser, bool enable_thinking) {
  ReasoningPrefix reasoning;
  // Harmony: the constrained part is a message's body, its header in the prompt (or the grammar's).
  if (parser.tool_call_format == text::ToolCallFormat::Harmony) return reasoning;
  reasoning.starts_in_reasoning = parser.starts_in_reasoning;
  // With thinking off the template closes an empty block in the prompt: the constrained part comes first.
  reasoning.allow_reasoning = parser.parse_reasoning && !parser.starts_in_reasoning && enable_thinking;
  return reasoning;
}

PreparedGeneration prepare(const ServerContext& ctx, const GenerationRequest& request) {
  PreparedPrompt prompt = tokenize_prompt(ctx, request);
  PreparedGeneration prepared = prepare_tokens(ctx, std::move(prompt.ids), request.params, request.output_limit,
                                               /*loop_guard_by_default=*/true);
  prepared.prompt = std::move(prompt.text);
  prepared.ignored = request.ignored;
  prepared.pipeline.parser = output_parser_options(ctx, prepared.prompt, request.parse_tool_calls, request.tools);
  prepared.engine_request.reasoning_budget =
      reasoning_budget_options(*ctx.model->tokenizer, prepared.pipeline.parser, request);
  prepared.engine_request.constraint = make_output_constraint(
      ctx, request.constraint, reasoning_prefix(prepared.pipeline.parser, request.enable_thinking),
      &prepared.unenforced_keywords);
  // A constrained output ends where its grammar does (closed within max_tokens by the
  // constraint's budget rule); cutting it at a loop would break the JSON it guarantees.
  if (prepared.engine_request.constraint) prepared.engine_request.loop_guard = {};
  return prepared;
}

PreparedGeneration prepare_completion(const ServerContext& ctx, std::vector<int32_t> prompt_ids,
                                      const GenerationParams& params) {
  PreparedGeneration prepared =
      prepare_tokens(ctx, std::move(prompt_ids), params, OutputLimitPolicy{}, /*loop_guard_by_default=*/false);
  prepared.pipeline.parser.parse_reasoning = false;
  prepared.pipeline.parser.parse_tool_calls = false;
  return prepared;
}

StartedGeneration start_generation(ServerContext& ctx, PreparedGeneration prepared, std::string request_id,
                                   Clock::time_point arrival, httplib::Response& res) {
  if (!prepared.unenforced_keywords.empty()) {
    res.set_header(kUnenforcedKeywordsHeader, header_list_value(prepared.unenforced_keywords));
    log_debug("{}: schema keywords not enforced: {}", request_id, fmt::join(prepared.unenforced_keywords, "; "));
  }
  if (!prepared.ignored.empty()) res.set_header(kIgnoredPartsHeader, header_list_value(prepared.ignored.kinds()));
  res.set_header("x-request-id", request_id);  // the id the access log and the server's log lines use
  ActiveGeneration gen;
  gen.request_id = request_id;
  gen.num_prompt_tokens = prepared.num_prompt_tokens();
  gen.arrival = arrival;
  gen.session = prepared.session;
  gen.protocol = prepared.protocol;
  gen.stream = prepared.stream;
  prepared.engine_request.request_id = std::move(request_id);
  try {
    gen.handle = ctx.engine->submit(std::move(prepared.engine_request));
  } catch (const engine::QueueFullError& e) {
    throw ApiError(429, "rate_limit_error", std::string(e.what()) + "; retry shortly", "", "queue_full");
  } catch (const Error& e) {
    throw ApiError(400, "invalid_request_error", e.what());
  }
  return StartedGeneration{std::move(gen), TokenTextPipeline(*ctx.model->tokenizer, std::move(prepared.pipeline))};
}

}  // namespace llmesh::api
