// The one path from a GenerationRequest to a running engine request, shared
// by /v1/chat/completions, /v1/responses, /v1/messages (and count_tokens,
// /tokenize, /apply-template for the prompt alone; /v1/completions from its
// token ids on):
//
//   render_prompt      messages + tools -> chat template (the reasoning switch always explicit) + prefill
//   tokenize           -> prompt ids (BOS as the tokenizer wants)
//   fit_output_tokens  max_tokens against the context and the KV pool, by the request's OutputLimitPolicy
//   parser options     reasoning / tool-call parsing, decided from the model and the rendered prompt
//   reasoning budget   the end-of-reasoning marker forced when the request's budget is spent
//   loop guard         the server's defaults (on here, off for completions) and the request's loop_guard
//   constraint         ConstraintSpec -> grammar, after the reasoning block the prompt or the model opens
//   start_generation   engine Request -> Engine::submit (429 when the queue is full)
//
// The endpoint then drives the returned generation (drive_generation, or
// serve_sse_stream when streaming) and formats its outputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <httplib.h>

#include "api/constrained_output.h"
#include "api/generation_request.h"
#include "api/server_context.h"
#include "api/session_key.h"
#include "api/token_text_pipeline.h"
#include "engine/request.h"
#include "text/chat_template.h"

namespace llmesh::api {

// A rendered and tokenized prompt.
struct PreparedPrompt {
  std::string text;
  std::vector<int32_t> ids;
};

// Everything needed to submit a request, checked: a prepared generation only fails to start when the engine refuses it.
struct PreparedGeneration {
  std::string prompt;              // the rendered prompt ("" for a completion given as token ids)
  engine::Request engine_request;  // all but request_id (set by start_generation); max_tokens fits the context
  PipelineOptions pipeline;        // stop strings, logprobs, the output parser
  std::vector<std::string> unenforced_keywords;  // schema keywords the constraint cannot enforce
  IgnoredParts ignored;                          // request parts the parser ignored
  SessionKey session;                            // the agent session it belongs to (set by the handler)
  std::string protocol;                          // chat | completions | messages | responses (set by the handler)
  bool stream = false;                           // (set by the handler)

  int64_t num_prompt_tokens() const { return int64_t(engine_request.prompt_ids.size()); }
};

// A submitted generation and the pipeline its tokens go through.
struct StartedGeneration {
  ActiveGeneration gen;
  TokenTextPipeline pipeline;
};

// The template variables: the request's kwargs and its reasoning switch.
text::ChatTemplateOptions template_options(const GenerationRequest& request, bool add_generation_prompt = true);

// The prompt text: the template's rendering, then the assistant prefill.
// ApiError 400 (in the request's ErrorStyle) when the template fails.
std::string render_prompt(const text::ChatTemplate& chat_template, const GenerationRequest& request,
                          bool add_generation_prompt = true);
// Same with the served model's template; ApiError 400 when it has none.
std::string render_prompt(const ServerContext& ctx, const GenerationRequest& request,
                          bool add_generation_prompt = true);

// Rendered and tokenized: what count_tokens and /tokenize report.
PreparedPrompt tokenize_prompt(const ServerContext& ctx, const GenerationRequest& request,
                               bool add_generation_prompt = true);

// The output tokens a request may have beside `num_prompt_tokens`: `requested`
// when it fits (Reject) or as much of it as fits (Clamp); absent, whatever
// fits the context and the KV pool. ApiError 400 when it cannot be met.
int64_t fit_output_tokens(const ServerContext& ctx, int64_t num_prompt_tokens, std::optional<int64_t> requested,
                          const OutputLimitPolicy& policy);

// Where a constrained part may start: inside the reasoning block the prompt
// opened, or after one the model may open when thinking is on.
ReasoningPrefix reasoning_prefix(const text::OutputParserOptions& parser, bool enable_thinking);

// Render, tokenize, fit the output, choose the parser and build the constraint.
PreparedGeneration prepare(const ServerContext& ctx, const GenerationRequest& request);
// A raw prompt (/v1/completions): no template, no reasoning or tool-call parsing, no constraint.
PreparedGeneration prepare_completion(const ServerContext& ctx, std::vector<int32_t> prompt_ids,
                                      const GenerationParams& params);

// Submits to the engine (ApiError 429 when the queue is full, 400 when the
// request can never fit); reports unenforced schema keywords and ignored request
// parts in response headers.
StartedGeneration start_generation(ServerContext& ctx, PreparedGeneration prepared, std::string request_id,
                                   Clock::time_point arrival, httplib::Response& res);

}  // namespace llmesh::api
