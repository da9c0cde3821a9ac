#include "api/anthropic_messages.h"

#include "api/anthropic_error.h"
#include "api/anthropic_prompt.h"
#include "api/anthropic_request.h"
#include "api/anthropic_stream.h"
#include "api/api_error.h"
#include "api/constrained_output.h"
#include "api/generation_driver.h"
#include "api/output_options.h"
#include "api/sse.h"
#include "api/sse_stream.h"
#include "core/log.h"

namespace llmesh::api {

using nlohmann::json;
using OJson = nlohmann::ordered_json;

namespace {

// A request parsed, rendered and tokenized: what both endpoints share.
struct PreparedMessages {
  MessagesRequest request;
  std::string prompt;
  std::vector<int32_t> prompt_ids;
};

PreparedMessages prepare_messages(const ServerContext& ctx, const httplib::Request& req, MessagesEndpoint endpoint) {
  PreparedMessages prepared;
  prepared.request = parse_messages_request(parse_ordered_json_body(req.body), endpoint);
  if (!ctx.model->chat_template) {
    throw ApiError(400, "invalid_request_error",
                   "This model has no chat template, so it cannot serve /v1/messages; use /v1/completions");
  }
  prepared.prompt = render_messages_prompt(*ctx.model->chat_template, prepared.request);
  prepared.prompt_ids = ctx.model->encode_prompt(prepared.prompt);
  return prepared;
}

// max_tokens clamped to what fits (Claude Code asks for 32,000-64,000); a
// prompt that leaves no room at all gets the error Claude Code compacts on.
int64_t clamp_max_tokens(const ServerContext& ctx, int64_t num_prompt_tokens, int64_t requested) {
  const int64_t context = ctx.context_tokens();
  if (num_prompt_tokens >= context) {
    throw ApiError(400, "invalid_request_error",
                   fmt::format("prompt is too long: {} tokens > {} maximum", num_prompt_tokens, context - 1));
  }
  int64_t room = context - num_prompt_tokens;
  const int64_t kv_room = ctx.engine->kv_cache_tokens() - num_prompt_tokens;
  if (kv_room >= 1) room = std::min(room, kv_room);
  return std::min(requested, room);
}

// The constraint for tool_choice any/tool or output_config.format (null when neither).
std::shared_ptr<TokenConstraint> output_constraint(const ServerContext& ctx, const MessagesRequest& request,
                                                   const OutputParserOptions& parser,
                                                   std::vector<std::string>* ignored) {
  ReasoningPrefix reasoning;
  reasoning.starts_in_reasoning = parser.starts_in_reasoning;
  reasoning.allow_reasoning = request.enable_thinking && parser.parse_reasoning && !parser.starts_in_reasoning;
  if (request.tool_choice == ToolChoiceMode::Any || request.tool_choice == ToolChoiceMode::Tool) {
    return make_tool_call_constraint(ctx, request.tools, request.forced_tool_name, reasoning, ignored);
  }
  if (!request.output_schema.is_null()) {
    return make_json_constraint(ctx, request.output_schema, reasoning, "output_config.format", ignored);
  }
  return nullptr;
}

}  // namespace

void handle_messages(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  const auto arrival = Clock::now();
  PreparedMessages prepared = prepare_messages(ctx, req, MessagesEndpoint::Create);
  MessagesRequest& request = prepared.request;
  request.params.max_tokens = clamp_max_tokens(ctx, int64_t(prepared.prompt_ids.size()), *request.params.max_tokens);

  PipelineOptions pipeline_options;
  pipeline_options.stop_strings = request.params.stop;
  pipeline_options.parser = output_parser_options(
      ctx, prepared.prompt, !request.tools.empty() && request.tool_choice != ToolChoiceMode::None);
  std::vector<std::string> ignored_keywords;
  request.params.constraint = output_constraint(ctx, request, pipeline_options.parser, &ignored_keywords);
  if (!ignored_keywords.empty())
    res.set_header(kUnenforcedKeywordsHeader, unenforced_keywords_header_value(ignored_keywords));

  const std::string id = make_request_id("msg_");
  const std::string model_name = request.params.model.empty() ? ctx.options.served_model_name : request.params.model;
  res.set_header("request-id", id);
  ActiveGeneration gen = start_generation(ctx, std::move(prepared.prompt_ids), request.params, id, arrival);
  TokenTextPipeline pipeline(*ctx.model->tokenizer, std::move(pipeline_options));

  if (request.params.stream) {
    auto job = std::make_shared<StreamJob>(std::move(gen), std::move(pipeline));
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
      if (output.finish_reason != FinishReason::None) {
        const TokenTextPipeline& p = raw->pipeline;
        const auto usage =
            AnthropicUsage::from_counts(raw->gen.num_prompt_tokens, p.num_cached_tokens(), p.num_generated_tokens());
        for (auto& event : writer->finish(output.finish_reason, p.matched_stop_string(), usage)) {
          events.push_back(std::move(event));
        }
      }
      return events;
    };
    job->error_chunks = [](const ApiError& e) {
      return std::vector<json>{anthropic_error_body(e.http_status(), e.what())};
    };
    job->keepalive_chunks = [] { return std::vector<json>{{{"type", "ping"}}}; };
    serve_sse_stream(ctx, res, job);
    return;
  }

  AnthropicEventWriter writer(id, model_name);
  std::vector<json> events{writer.message_start(AnthropicUsage::from_counts(gen.num_prompt_tokens, 0, 0))};
  GenerationCallbacks callbacks;
  callbacks.on_output = [&](PipelineOutput& output) {
    for (auto& event : writer.push(output.delta)) events.push_back(std::move(event));
    if (output.finish_reason != FinishReason::None) {
      const auto usage = AnthropicUsage::from_counts(gen.num_prompt_tokens, pipeline.num_cached_tokens(),
                                                     pipeline.num_generated_tokens());
      for (auto& event : writer.finish(output.finish_reason, pipeline.matched_stop_string(), usage)) {
        events.push_back(std::move(event));
      }
    }
    return true;
  };
  drive_generation(ctx, gen, pipeline, callbacks);
  const OJson message = fold_message_events(events);
  res.set_content(message.dump(-1, ' ', false, OJson::error_handler_t::replace), "application/json");
}

void handle_count_tokens(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  // Rendering and tokenizing run here on the HTTP thread: nothing waits for the engine.
  const PreparedMessages prepared = prepare_messages(ctx, req, MessagesEndpoint::CountTokens);
  res.set_content(dump_json({{"input_tokens", prepared.prompt_ids.size()}}), "application/json");
}

}  // namespace llmesh::api
