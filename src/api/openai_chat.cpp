#include "api/openai_chat.h"

#include <fmt/ranges.h>

#include "api/api_error.h"
#include "api/constrained_output.h"
#include "api/generation_driver.h"
#include "api/openai_format.h"
#include "api/output_options.h"
#include "api/sse.h"
#include "api/sse_stream.h"
#include "core/error.h"
#include "core/log.h"

namespace llmesh::api {

using nlohmann::json;

ChatChunkFormatter::ChatChunkFormatter(std::string id, int64_t created, std::string model, const Tokenizer& tokenizer)
    : id_(std::move(id)), created_(created), model_(std::move(model)), tokenizer_(tokenizer) {}

json ChatChunkFormatter::chunk(json delta, json finish_reason, json logprobs) const {
  return {{"id", id_},
          {"object", "chat.completion.chunk"},
          {"created", created_},
          {"model", model_},
          {"choices", json::array({{{"index", 0},
                                    {"delta", std::move(delta)},
                                    {"logprobs", std::move(logprobs)},
                                    {"finish_reason", std::move(finish_reason)}}})}};
}

json ChatChunkFormatter::role_chunk() const {
  return chunk({{"role", "assistant"}, {"content", ""}}, nullptr, nullptr);
}

std::vector<json> ChatChunkFormatter::chunks(const PipelineOutput& output, bool emitted_tool_calls) {
  std::vector<json> out;
  json logprobs = nullptr;
  if (!output.logprobs.empty()) logprobs = {{"content", chat_logprob_entries(tokenizer_, output.logprobs)}};
  const OutputDelta& d = output.delta;
  if (!d.reasoning.empty()) out.push_back(chunk({{"reasoning_content", d.reasoning}}, nullptr, nullptr));
  if (!d.content.empty()) out.push_back(chunk({{"content", d.content}}, nullptr, nullptr));
  if (!d.tool_calls.empty()) {
    out.push_back(chunk({{"tool_calls", tool_calls_json(d.tool_calls, num_tool_calls_, /*streaming=*/true)}}, nullptr,
                        nullptr));
    num_tool_calls_ += d.tool_calls.size();
  }
  // Logprobs ride on the first chunk of this output (or on their own when the text is held back).
  if (!logprobs.is_null()) {
    if (out.empty()) out.push_back(chunk(json::object(), nullptr, nullptr));
    out.front()["choices"][0]["logprobs"] = logprobs;
  }
  if (output.finish_reason != FinishReason::None) {
    out.push_back(chunk(json::object(), finish_reason_string(output.finish_reason, emitted_tool_calls), nullptr));
  }
  return out;
}

json ChatChunkFormatter::usage_chunk(const json& usage) const {
  return {{"id", id_},
          {"object", "chat.completion.chunk"},
          {"created", created_},
          {"model", model_},
          {"choices", json::array()},
          {"usage", usage}};
}

void ChatResponseBuilder::add(const PipelineOutput& output) {
  message_.reasoning += output.delta.reasoning;
  message_.content += output.delta.content;
  for (const auto& call : output.delta.tool_calls) message_.tool_calls.push_back(call);
  logprobs_.insert(logprobs_.end(), output.logprobs.begin(), output.logprobs.end());
}

json ChatResponseBuilder::build(const std::string& id, int64_t created, const std::string& model,
                                FinishReason finish_reason, const json& usage, bool include_logprobs) const {
  json message = {{"role", "assistant"}, {"content", message_.content}};
  const bool has_calls = !message_.tool_calls.empty();
  if (has_calls) {
    message["tool_calls"] = tool_calls_json(message_.tool_calls, 0, /*streaming=*/false);
    if (message_.content.find_first_not_of(" \t\r\n") == std::string::npos) message["content"] = nullptr;
  }
  if (!message_.reasoning.empty()) message["reasoning_content"] = message_.reasoning;
  json logprobs = nullptr;
  if (include_logprobs) logprobs = {{"content", chat_logprob_entries(tokenizer_, logprobs_)}};
  return {{"id", id},
          {"object", "chat.completion"},
          {"created", created},
          {"model", model},
          {"choices", json::array({{{"index", 0},
                                    {"message", message},
                                    {"logprobs", logprobs},
                                    {"finish_reason", finish_reason_string(finish_reason, has_calls)}}})},
          {"usage", usage}};
}

std::string render_chat_prompt(const ServerContext& ctx, const ChatCompletionRequest& request,
                               bool add_generation_prompt) {
  if (!ctx.model->chat_template) {
    throw ApiError(400, "invalid_request_error",
                   "This model has no chat template; use /v1/completions with a raw prompt", "messages");
  }
  ChatTemplateOptions options;
  options.add_generation_prompt = add_generation_prompt;
  options.enable_thinking = request.enable_thinking;
  options.extra = request.template_kwargs;
  options.extra.erase("enable_thinking");
  try {
    return ctx.model->render_chat(request.messages, request.tools, options);
  } catch (const Error& e) {
    throw ApiError(400, "invalid_request_error", fmt::format("the chat template failed: {}", e.what()), "messages");
  }
}

namespace {

PipelineOptions chat_pipeline_options(const ServerContext& ctx, const ChatCompletionRequest& request,
                                      const std::string& prompt) {
  PipelineOptions options;
  options.stop_strings = request.params.stop;
  options.collect_logprobs = request.params.logprobs;
  options.parser = output_parser_options(ctx, prompt, request.parse_tool_calls);
  return options;
}

// Structured output: a forced tool call (tool_choice required / named) or
// response_format json_schema / json_object; null when the output is free.
std::shared_ptr<TokenConstraint> chat_output_constraint(const ServerContext& ctx, const std::string& body,
                                                        const ChatCompletionRequest& request,
                                                        const OutputParserOptions& parser,
                                                        std::vector<std::string>* ignored) {
  if (!request.tool_call_required && !request.response_schema) return nullptr;
  ReasoningPrefix reasoning;
  reasoning.starts_in_reasoning = parser.starts_in_reasoning;
  // The model may think first unless the request switched thinking off (the
  // template then closes an empty block in the prompt itself).
  reasoning.allow_reasoning =
      parser.parse_reasoning && !parser.starts_in_reasoning && request.enable_thinking.value_or(true);
  if (request.tool_call_required) {
    return make_tool_call_constraint(ctx, ordered_value_at(body, {"tools"}, request.tools), request.forced_tool_name,
                                     reasoning, ignored);
  }
  return make_json_constraint(
      ctx, ordered_value_at(body, {"response_format", "json_schema", "schema"}, *request.response_schema), reasoning,
      "response_format", ignored);
}

}  // namespace

void handle_chat_completions(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  const auto arrival = Clock::now();
  const ChatCompletionRequest request = parse_chat_completion_request(parse_json_body(req.body));
  ctx.check_model_name(request.params.model);
  const std::string prompt = render_chat_prompt(ctx, request);
  std::vector<int32_t> prompt_ids = ctx.model->encode_prompt(prompt);

  const std::string id = make_request_id("chatcmpl-");
  const int64_t created = unix_time_seconds();
  const std::string& model_name = ctx.options.served_model_name;
  const Tokenizer& tokenizer = *ctx.model->tokenizer;
  PipelineOptions pipeline_options = chat_pipeline_options(ctx, request, prompt);
  GenerationParams params = request.params;
  std::vector<std::string> ignored_keywords;
  params.constraint = chat_output_constraint(ctx, req.body, request, pipeline_options.parser, &ignored_keywords);
  if (!ignored_keywords.empty()) {
    res.set_header(kUnenforcedKeywordsHeader, unenforced_keywords_header_value(ignored_keywords));
    log_debug("{}: schema keywords not enforced: {}", id, fmt::join(ignored_keywords, "; "));
  }
  ActiveGeneration gen = start_generation(ctx, std::move(prompt_ids), params, id, arrival);
  TokenTextPipeline pipeline(tokenizer, std::move(pipeline_options));

  if (request.params.stream) {
    auto job = std::make_shared<StreamJob>(std::move(gen), std::move(pipeline));
    auto formatter = std::make_shared<ChatChunkFormatter>(id, created, model_name, tokenizer);
    job->first_chunks = [formatter] { return std::vector<json>{formatter->role_chunk()}; };
    StreamJob* raw = job.get();
    job->output_chunks = [formatter, raw](PipelineOutput& output) {
      return formatter->chunks(output, raw->pipeline.emitted_tool_calls());
    };
    if (request.params.include_usage) {
      job->last_chunks = [formatter, raw] {
        const TokenTextPipeline& p = raw->pipeline;
        return std::vector<json>{formatter->usage_chunk(
            usage_json(raw->gen.num_prompt_tokens, p.num_generated_tokens(), p.num_cached_tokens()))};
      };
    }
    serve_sse_stream(ctx, res, job);
    return;
  }

  ChatResponseBuilder builder(tokenizer);
  GenerationCallbacks callbacks;
  callbacks.on_output = [&](PipelineOutput& output) {
    builder.add(output);
    return true;
  };
  drive_generation(ctx, gen, pipeline, callbacks);
  const json usage = usage_json(gen.num_prompt_tokens, pipeline.num_generated_tokens(), pipeline.num_cached_tokens());
  res.set_content(dump_json(builder.build(id, created, model_name, pipeline.finish_reason(), usage,
                                          request.params.logprobs)),
                  "application/json");
}

}  // namespace llmesh::api
