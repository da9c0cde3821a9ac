#include "api/openai_responses.h"

#include "api/api_error.h"
#include "api/constrained_output.h"
#include "api/generation_pipeline.h"
#include "api/openai_format.h"
#include "api/responses_items.h"
#include "api/responses_request.h"
#include "api/responses_store.h"
#include "api/responses_stream.h"
#include "api/sse.h"
#include "api/sse_stream.h"

namespace llmesh::api {

using nlohmann::json;

namespace {

ResponsesUsage responses_usage(const text::Tokenizer& tokenizer, const ActiveGeneration& gen,
                               const TokenTextPipeline& pipeline, const ResponsesEventWriter& writer) {
  ResponsesUsage usage;
  usage.num_input_tokens = gen.num_prompt_tokens;
  usage.num_cached_tokens = pipeline.num_cached_tokens();
  usage.num_output_tokens = pipeline.num_generated_tokens();
  usage.num_reasoning_tokens = estimate_reasoning_tokens(tokenizer, writer.reasoning_text(), usage.num_output_tokens);
  return usage;
}

// With store (the default), the conversation so far is kept for previous_response_id.
// A failed response is not kept (OpenAI does not continue from one either).
void remember_response(const std::string& response_id, bool store, const json& conversation_items,
                       const json& final_response) {
  if (!store || final_response.value("status", "") == "failed") return;
  json items = conversation_items;
  for (const auto& item : final_response["output"]) items.push_back(item);
  response_store().put(response_id, std::move(items));
}

}  // namespace

void handle_responses(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  const auto arrival = Clock::now();
  const nlohmann::json body = parse_json_body(req.body);
  ResponsesRequest request = parse_responses_request(body, &response_store());
  ctx.check_model_name(request.params.model);
  PreparedGeneration prepared = prepare(ctx, to_generation_request(request, req.body));
  prepared.session = session_key(body, PromptApi::responses, req.get_header_value("x-session-id"));
  prepared.protocol = "responses";
  prepared.stream = request.params.stream;

  const std::string response_id = make_item_id("resp_");
  const text::Tokenizer& tokenizer = *ctx.model->tokenizer;
  ResponseEnvelope envelope(request, response_id, unix_time_seconds(), ctx.options.served_model_name,
                            prepared.engine_request.sampling);
  StartedGeneration started = start_generation(ctx, std::move(prepared), response_id, arrival, res);

  // One writer for both paths: its events are streamed, or only its final response is returned.
  auto job = std::make_shared<StreamJob>(std::move(started));
  auto writer = std::make_shared<ResponsesEventWriter>(std::move(envelope), request.include_encrypted_reasoning);
  job->typed_events = true;
  StreamJob* raw = job.get();
  job->first_chunks = [writer] { return writer->start(); };
  auto conversation = std::make_shared<const json>(std::move(request.conversation_items));
  job->output_chunks = [writer, raw, &tokenizer, conversation, response_id,
                        store = request.store](PipelineOutput& output) {
    std::vector<json> events = writer->push(output.delta);
    if (output.finish_reason != engine::FinishReason::None) {
      const ResponsesUsage usage = responses_usage(tokenizer, raw->gen, raw->pipeline, *writer);
      for (auto& e : writer->finish(output.finish_reason, usage)) events.push_back(std::move(e));
      remember_response(response_id, store, *conversation, writer->final_response());
    }
    return events;
  };
  if (request.params.stream) {
    job->error_chunks = [writer](const ApiError& e) {
      return writer->fail(e.code().empty() ? e.type() : e.code(), e.what());
    };
    job->keepalive_chunks = [writer] { return writer->keepalive(); };
    serve_sse_stream(ctx, res, job);
    return;
  }
  collect_events(ctx, *job);
  res.set_content(dump_json(writer->final_response()), "application/json");
}

}  // namespace llmesh::api
