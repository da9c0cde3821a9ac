#include "api/anthropic_messages.h"

#include "api/anthropic_error.h"
#include "api/anthropic_prompt.h"
#include "api/anthropic_request.h"
#include "api/anthropic_stream.h"
#include "api/api_error.h"
#include "api/cache_retention.h"
#include "api/generation_pipeline.h"
#include "api/sse.h"
#include "api/sse_stream.h"

namespace llmesh::api {

using nlohmann::json;
using OJson = nlohmann::ordered_json;

namespace {

// The session of a Messages request (session_key.h reads plain JSON): only the
// parts it looks at are converted — metadata, system, the first message.
SessionKey messages_session_key(const OJson& body, const std::string& header) {
  nlohmann::json parts = nlohmann::json::object();
  for (const char* name : {"metadata", "system"})
    if (auto it = body.find(name); it != body.end()) parts[name] = nlohmann::json::parse(it->dump());
  if (auto it = body.find("messages"); it != body.end() && it->is_array() && !it->empty()) {
    parts["messages"] = nlohmann::json::array({nlohmann::json::parse((*it)[0].dump())});
  }
  return session_key(parts, PromptApi::anthropic_messages, header);
}

}  // namespace

void handle_messages(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  const auto arrival = Clock::now();
  const OJson body = parse_ordered_json_body(req.body);
  MessagesRequest request = parse_messages_request(body, MessagesEndpoint::Create);
  request.params.cache_ttl_seconds = anthropic_cache_ttl_seconds(body);
  PreparedGeneration prepared = prepare(ctx, to_generation_request(request));
  prepared.session = messages_session_key(body, req.get_header_value("x-session-id"));
  prepared.protocol = "messages";
  prepared.stream = request.params.stream;

  const std::string id = make_request_id("msg_");
  const std::string model_name = request.params.model.empty() ? ctx.options.served_model_name : request.params.model;
  res.set_header("request-id", id);
  StartedGeneration started = start_generation(ctx, std::move(prepared), id, arrival, res);

  // One set of events for both paths: streamed as they come, or folded into one message.
  auto job = std::make_shared<StreamJob>(std::move(started));
  auto writer = std::make_shared<AnthropicEventWriter>(id, model_name);
  StreamJob* raw = job.get();
  job->typed_events = true;
  // Sent at once, before prefill: the prefix-cache split is not known yet, so
  // the whole prompt counts as input here and message_delta carries the final split.
  job->first_chunks = [writer, raw] {
    return std::vector<json>{writer->message_start(AnthropicUsage::from_counts(raw->gen.num_prompt_tokens, 0, 0))};
  };
  job->output_chunks = [writer, raw](PipelineOutput& output) {
    std::vector<json> events = writer->push(output.delta);
    if (output.finish_reason != engine::FinishReason::None) {
      const TokenTextPipeline& p = raw->pipeline;
      const auto usage =
          AnthropicUsage::from_counts(raw->gen.num_prompt_tokens, p.num_cached_tokens(), p.num_generated_tokens());
      for (auto& event : writer->finish(output.finish_reason, p.matched_stop_string(), usage)) {
        events.push_back(std::move(event));
      }
    }
    return events;
  };
  if (request.params.stream) {
    job->error_chunks = [](const ApiError& e) {
      return std::vector<json>{anthropic_error_body(e.http_status(), e.what())};
    };
    job->keepalive_chunks = [] { return std::vector<json>{{{"type", "ping"}}}; };
    serve_sse_stream(ctx, res, job);
    return;
  }
  const OJson message = fold_message_events(collect_events(ctx, *job));
  res.set_content(message.dump(-1, ' ', false, OJson::error_handler_t::replace), "application/json");
}

void handle_count_tokens(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  // Rendering and tokenizing run here on the HTTP thread: nothing waits for the engine.
  const MessagesRequest request =
      parse_messages_request(parse_ordered_json_body(req.body), MessagesEndpoint::CountTokens);
  const PreparedPrompt prompt = tokenize_prompt(ctx, to_generation_request(request));
  res.set_content(dump_json({{"input_tokens", prompt.ids.size()}}), "application/json");
}

}  // namespace llmesh::api
