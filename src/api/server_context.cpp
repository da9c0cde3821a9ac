#include "api/server_context.h"

#include <random>

#include "api/api_error.h"
#include "core/error.h"

namespace llmesh::api {

int64_t ServerContext::context_tokens() const {
  const int64_t engine_limit = engine ? engine->context_tokens() : 0;
  if (options.context_tokens > 0 && (engine_limit <= 0 || options.context_tokens < engine_limit)) {
    return options.context_tokens;
  }
  return engine_limit;
}

void ServerContext::check_model_name(const std::string& requested) const {
  if (requested.empty() || requested == options.served_model_name) return;
  throw ApiError(404, "invalid_request_error",
                 fmt::format("The model '{}' does not exist; this server serves '{}'", requested,
                             options.served_model_name),
                 "model", "model_not_found");
}

std::string make_request_id(const std::string& prefix) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{}{:016x}{:08x}", prefix, rng(), uint32_t(rng()));
}

ActiveGeneration start_generation(ServerContext& ctx, std::vector<int32_t> prompt_ids, const GenerationParams& params,
                                  std::string request_id, Clock::time_point arrival) {
  const int64_t context = ctx.context_tokens();
  const int64_t num_prompt = int64_t(prompt_ids.size());
  if (num_prompt == 0) fail_param("messages", "the prompt is empty after tokenization");
  int64_t max_tokens = 0;
  if (params.max_tokens) {
    max_tokens = *params.max_tokens;
    if (num_prompt + max_tokens > context) {
      throw ApiError(400, "invalid_request_error",
                     fmt::format("This model's maximum context length is {} tokens, but {} tokens were requested "
                                 "({} in the prompt + {} for max_tokens). Shorten the prompt or lower max_tokens.",
                                 context, num_prompt + max_tokens, num_prompt, max_tokens),
                     "max_tokens", "context_length_exceeded");
    }
  } else {
    max_tokens = context - num_prompt;
    if (max_tokens < 1) {
      throw ApiError(400, "invalid_request_error",
                     fmt::format("This model's maximum context length is {} tokens, but the prompt has {} tokens, "
                                 "leaving no room for output.",
                                 context, num_prompt),
                     "messages", "context_length_exceeded");
    }
    // Default to what fits in the KV pool too, so a request without max_tokens never fails for it.
    const int64_t kv_room = ctx.engine->kv_cache_tokens() - num_prompt;
    if (kv_room >= 1) max_tokens = std::min(max_tokens, kv_room);
  }

  Request request;
  request.request_id = request_id;
  request.prompt_ids = std::move(prompt_ids);
  request.sampling = params.sampling(ctx.model->files.generation);
  request.max_tokens = max_tokens;
  request.min_tokens = std::min(params.min_tokens, max_tokens);
  request.ignore_eos = params.ignore_eos;
  request.num_top_logprobs = params.logprobs ? params.top_logprobs : -1;
  request.constraint = params.constraint;

  ActiveGeneration gen;
  gen.request_id = std::move(request_id);
  gen.num_prompt_tokens = num_prompt;
  gen.max_tokens = max_tokens;
  gen.arrival = arrival;
  try {
    gen.handle = ctx.engine->submit(std::move(request));
  } catch (const QueueFullError& e) {
    throw ApiError(429, "rate_limit_error", std::string(e.what()) + "; retry shortly", "", "queue_full");
  } catch (const Error& e) {
    throw ApiError(400, "invalid_request_error", e.what());
  }
  return gen;
}

}  // namespace llmesh::api
