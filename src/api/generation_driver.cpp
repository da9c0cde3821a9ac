#include "api/generation_driver.h"

#include "api/api_error.h"
#include "api/request_record.h"
#include "core/log.h"

namespace llmesh::api {

namespace {

// How often a waiting stream checks that its client is still there.
constexpr int64_t kPollIntervalMs = 100;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

bool drive_generation(ServerContext& ctx, ActiveGeneration& gen, TokenTextPipeline& pipeline,
                      const GenerationCallbacks& callbacks) {
  std::optional<Clock::time_point> first_token_time;
  // `outcome`: ok | error | cancelled (the client left or the drain ran out).
  auto observe = [&](const char* outcome, const std::string& error = "") {
    const auto now = Clock::now();
    const bool succeeded = std::string_view(outcome) == "ok";
    const double ttft = first_token_time ? seconds_between(gen.arrival, *first_token_time) : 0.0;
    ctx.metrics.observe_request(ttft, seconds_between(gen.arrival, now), pipeline.num_generated_tokens(), succeeded);
    ctx.sessions.record(gen.session, gen.num_prompt_tokens, pipeline.num_cached_tokens(),
                        pipeline.num_generated_tokens(), succeeded);
    ctx.requests.add(request_record(ctx, gen, pipeline, first_token_time, outcome, error));
  };

  bool cancelled_by_drain = false;
  while (!pipeline.finished()) {
    // A drain ran out of time: the engine ends the request (an Aborted event), the stream closes normally.
    if (!cancelled_by_drain && ctx.cancel_generations.load(std::memory_order_relaxed)) {
      gen.handle->cancel();
      cancelled_by_drain = true;
    }
    engine::TokenEvent event;
    bool timed_out = false;
    PipelineOutput output;
    if (gen.handle->next_for(&event, kPollIntervalMs, &timed_out)) {
      if (event.token_id >= 0 && !first_token_time) first_token_time = Clock::now();
      try {
        output = pipeline.push(event);
      } catch (const ApiError& e) {
        gen.handle->cancel();
        observe("error", e.what());
        throw;
      }
      // A stop string ended the text: the engine need not generate more.
      if (pipeline.stopped_by_string()) gen.handle->cancel();
    } else if (timed_out) {
      if (callbacks.client_alive && !callbacks.client_alive()) {
        gen.handle->cancel();
        observe("cancelled");
        return false;
      }
      continue;
    } else {
      output = pipeline.abort();  // the channel closed without a final event
    }
    if (output.delta.empty() && output.logprobs.empty() && output.finish_reason == engine::FinishReason::None) continue;
    if (!callbacks.on_output(output)) {
      gen.handle->cancel();
      observe("cancelled");
      return false;
    }
  }
  if (pipeline.finish_reason() == engine::FinishReason::Repetition) {
    ctx.metrics.count_loop_guard_stop();
    log_info("{}: the loop guard ended the generation after {} tokens (the output repeats itself)", gen.request_id,
             pipeline.num_generated_tokens());
  }
  observe(pipeline.finish_reason() != engine::FinishReason::Aborted ? "ok" : "cancelled");
  return true;
}

}  // namespace llmesh::api
