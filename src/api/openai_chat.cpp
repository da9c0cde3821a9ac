#include "api/openai_chat.h"

#include <fmt/ranges.h>

#include "api/api_error.h"
#include "api/constrained_output.h"
#include "api/generation_driver.h"
#include "api/generation_pipeline.h"
#include "api/openai_format.h"
#include "api/sse.h"
#include "api/sse_stream.h"

namespace llmesh::api {

using nlohmann::json;

ChatChunkFormatter::ChatChunkFormatter(std::string id, int64_t created, std::string model,
                                       const text::Tokenizer& tokenizer)
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
  const text::OutputDelta& d = output.delta;
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
  if (output.finish_reason != engine::FinishReason::None) {
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
                                engine::FinishReason finish_reason, const json& usage, bool include_logprobs) const {
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

void handle_chat_completions(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  const auto arrival = Clock::now();
  const nlohmann::json body = parse_json_body(req.body);
  const ChatCompletionRequest request = parse_chat_completion_request(body);
  ctx.check_model_name(request.params.model);
  PreparedGeneration prepared = prepare(ctx, to_generation_request(request, req.body));
  prepared.session = session_key(body, PromptApi::chat_completions, req.get_header_value("x-session-id"));
  prepared.protocol = "chat";
  prepared.stream = request.params.stream;

  const std::string id = make_request_id("chatcmpl-");
  const int64_t created = unix_time_seconds();
  const std::string& model_name = ctx.options.served_model_name;
  const text::Tokenizer& tokenizer = *ctx.model->tokenizer;
  StartedGeneration started = start_generation(ctx, std::move(prepared), id, arrival, res);

  if (request.params.stream) {
    auto job = std::make_shared<StreamJob>(std::move(started));
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
  drive_generation(ctx, started.gen, started.pipeline, callbacks);
  const TokenTextPipeline& pipeline = started.pipeline;
  const json usage =
      usage_json(started.gen.num_prompt_tokens, pipeline.num_generated_tokens(), pipeline.num_cached_tokens());
  res.set_content(dump_json(builder.build(id, created, model_name, pipeline.finish_reason(), usage,
                                          request.params.logprobs)),
                  "application/json");
}

}  // namespace llmesh::api
