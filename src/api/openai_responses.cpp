#include "api/openai_responses.h"

#include "api/api_error.h"
#include "api/constrained_output.h"
#include "api/generation_driver.h"
#include "api/openai_chat.h"
#include "api/openai_format.h"
#include "api/output_options.h"
#include "api/responses_items.h"
#include "api/responses_request.h"
#include "api/responses_store.h"
#include "api/responses_stream.h"
#include "api/sse.h"
#include "api/sse_stream.h"
#include "core/log.h"

namespace llmesh::api {

using nlohmann::json;

namespace {

// The chat request the template renders: the same path as /v1/chat/completions.
ChatCompletionRequest as_chat_request(const ResponsesRequest& request) {
  ChatCompletionRequest chat;
  chat.params = request.params;
  chat.messages = request.messages;
  chat.tools = request.tools;
  chat.parse_tool_calls = !request.tools.empty() && request.tool_choice != ResponsesToolChoice::None;
  chat.enable_thinking = request.enable_thinking;
  chat.template_kwargs = json::object();
  return chat;
}

// tool_choice required / a named function, or text.format json_schema / json_object:
// a token constraint makes the output valid by construction.
std::shared_ptr<TokenConstraint> output_constraint(const ServerContext& ctx, const std::string& body,
                                                   const ResponsesRequest& request, const OutputParserOptions& parser,
                                                   std::vector<std::string>* ignored) {
  ReasoningPrefix reasoning;
  reasoning.starts_in_reasoning = parser.starts_in_reasoning;
  // Thinking switched off (reasoning.effort none/minimal) means the constrained part comes first.
  reasoning.allow_reasoning =
      parser.parse_reasoning && !parser.starts_in_reasoning && request.enable_thinking.value_or(true);
  std::shared_ptr<TokenConstraint> constraint;
  if (request.tool_choice == ResponsesToolChoice::Required || request.tool_choice == ResponsesToolChoice::Named) {
    nlohmann::ordered_json function_tools = nlohmann::ordered_json::array();
    for (const auto& tool : ordered_value_at(body, {"tools"}, json::array())) {
      if (tool.is_object() && tool.value("type", "") == "function") function_tools.push_back(tool);
    }
    if (function_tools.empty()) function_tools = request.tools;
    constraint = make_tool_call_constraint(ctx, function_tools, request.forced_tool_name, reasoning, ignored);
  } else if (request.text_format != ResponsesTextFormat::Text) {
    constraint = make_json_constraint(ctx, ordered_value_at(body, {"text", "format", "schema"}, request.text_schema),
                                      reasoning, "text.format.schema", ignored);
  }
  return constraint;
}

ResponsesUsage responses_usage(const Tokenizer& tokenizer, const ActiveGeneration& gen,
                               const TokenTextPipeline& pipeline, const ResponsesEventWriter& writer) {
  ResponsesUsage usage;
  usage.num_input_tokens = gen.num_prompt_tokens;
  usage.num_cached_tokens = pipeline.num_cached_tokens();
  usage.num_output_tokens = pipeline.num_generated_tokens();
  usage.num_reasoning_tokens = estimate_reasoning_tokens(tokenizer, writer.reasoning_text(), usage.num_output_tokens);
  return usage;
}

// start_generation checks the same, but names chat's `max_tokens`; this API calls it max_output_tokens.
void check_output_room(const ServerContext& ctx, int64_t num_prompt_tokens, std::optional<int64_t> max_output_tokens) {
  const int64_t context = ctx.context_tokens();
  if (!max_output_tokens || num_prompt_tokens + *max_output_tokens <= context) return;
  throw ApiError(400, "invalid_request_error",
                 fmt::format("This model's maximum context length is {} tokens, but {} tokens were requested ({} in "
                             "the input + {} for max_output_tokens). Shorten the input or lower max_output_tokens.",
                             context, num_prompt_tokens + *max_output_tokens, num_prompt_tokens, *max_output_tokens),
                 "max_output_tokens", "context_length_exceeded");
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
  ResponsesRequest request = parse_responses_request(parse_json_body(req.body), &response_store());
  ctx.check_model_name(request.params.model);
  const ChatCompletionRequest chat = as_chat_request(request);
  const std::string prompt = render_chat_prompt(ctx, chat);

  PipelineOptions pipeline_options;
  pipeline_options.parser = output_parser_options(ctx, prompt, chat.parse_tool_calls);
  std::vector<std::string> ignored_keywords;
  request.params.constraint = output_constraint(ctx, req.body, request, pipeline_options.parser, &ignored_keywords);
  if (!ignored_keywords.empty()) {
    res.set_header(kUnenforcedKeywordsHeader, unenforced_keywords_header_value(ignored_keywords));
  }
  std::vector<int32_t> prompt_ids = ctx.model->encode_prompt(prompt);
  check_output_room(ctx, int64_t(prompt_ids.size()), request.params.max_tokens);

  const std::string response_id = make_item_id("resp_");
  const Tokenizer& tokenizer = *ctx.model->tokenizer;
  ResponseEnvelope envelope(request, response_id, unix_time_seconds(), ctx.options.served_model_name,
                            request.params.sampling(ctx.model->files.generation));
  ActiveGeneration gen = start_generation(ctx, std::move(prompt_ids), request.params, response_id, arrival);
  TokenTextPipeline pipeline(tokenizer, std::move(pipeline_options));

  if (request.params.stream) {
    auto job = std::make_shared<StreamJob>(std::move(gen), std::move(pipeline));
    auto writer = std::make_shared<ResponsesEventWriter>(std::move(envelope), request.include_encrypted_reasoning);
    job->typed_events = true;
    StreamJob* raw = job.get();
    job->first_chunks = [writer] { return writer->start(); };
    auto conversation = std::make_shared<const json>(std::move(request.conversation_items));
    job->output_chunks = [writer, raw, &tokenizer, conversation, response_id,
                          store = request.store](PipelineOutput& output) {
      std::vector<json> events = writer->push(output.delta);
      if (output.finish_reason != FinishReason::None) {
        const ResponsesUsage usage = responses_usage(tokenizer, raw->gen, raw->pipeline, *writer);
        for (auto& e : writer->finish(output.finish_reason, usage)) events.push_back(std::move(e));
        remember_response(response_id, store, *conversation, writer->final_response());
      }
      return events;
    };
    job->error_chunks = [writer](const ApiError& e) {
      return writer->fail(e.code().empty() ? e.type() : e.code(), e.what());
    };
    job->keepalive_chunks = [writer] { return writer->keepalive(); };
    serve_sse_stream(ctx, res, job);
    return;
  }

  ResponsesEventWriter writer(std::move(envelope), request.include_encrypted_reasoning);
  GenerationCallbacks callbacks;
  callbacks.on_output = [&](PipelineOutput& output) {
    writer.push(output.delta);
    return true;
  };
  drive_generation(ctx, gen, pipeline, callbacks);
  writer.finish(pipeline.finish_reason(), responses_usage(tokenizer, gen, pipeline, writer));
  remember_response(response_id, request.store, request.conversation_items, writer.final_response());
  res.set_content(dump_json(writer.final_response()), "application/json");
}

}  // namespace llmesh::api
