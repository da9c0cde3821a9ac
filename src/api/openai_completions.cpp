#include "api/openai_completions.h"

#include "api/api_error.h"
#include "api/generation_driver.h"
#include "api/generation_pipeline.h"
#include "api/openai_format.h"
#include "api/sse.h"
#include "api/sse_stream.h"

namespace llmesh::api {

using nlohmann::json;

namespace {

// The legacy completions logprobs shape: parallel arrays.
struct LegacyLogprobs {
  json tokens = json::array(), token_logprobs = json::array(), top_logprobs = json::array(),
       text_offset = json::array();
  int64_t offset = 0;

  void add(const text::Tokenizer& tokenizer, const std::vector<TokenLogprobs>& entries) {
    for (const auto& e : entries) {
      const std::string text = tokenizer.token_bytes(e.token_id);
      tokens.push_back(text);
      token_logprobs.push_back(e.logprob);
      json top = json::object();
      for (const auto& alt : e.top_logprobs) top[tokenizer.token_bytes(alt.token_id)] = alt.logprob;
      top_logprobs.push_back(top);
      text_offset.push_back(offset);
      offset += int64_t(text.size());
    }
  }
  json to_json() const {
    return {{"tokens", tokens}, {"token_logprobs", token_logprobs}, {"top_logprobs", top_logprobs},
            {"text_offset", text_offset}};
  }
};

json completion_object(const std::string& id, int64_t created, const std::string& model, const std::string& text,
                       json logprobs, json finish_reason) {
  return {{"id", id},
          {"object", "text_completion"},
          {"created", created},
          {"model", model},
          {"choices", json::array({{{"index", 0},
                                    {"text", text},
                                    {"logprobs", std::move(logprobs)},
                                    {"finish_reason", std::move(finish_reason)}}})}};
}

}  // namespace

void handle_completions(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  const auto arrival = Clock::now();
  const nlohmann::json request_body = parse_json_body(req.body);
  const CompletionRequest request = parse_completion_request(request_body);
  ctx.check_model_name(request.params.model);
  const text::Tokenizer& tokenizer = *ctx.model->tokenizer;
  std::vector<int32_t> prompt_ids =
      request.prompt_text ? ctx.model->encode_prompt(*request.prompt_text) : request.prompt_ids;
  for (int32_t id : prompt_ids) {
    if (id >= tokenizer.vocab_size()) fail_param("prompt", "token id {} is outside the vocabulary", id);
  }
  const std::string echo_text = request.echo ? (request.prompt_text ? *request.prompt_text : tokenizer.decode(prompt_ids))
                                             : std::string();

  const std::string id = make_request_id("cmpl-");
  const int64_t created = unix_time_seconds();
  const std::string model_name = ctx.options.served_model_name;
  PreparedGeneration prepared = prepare_completion(ctx, std::move(prompt_ids), request.params);
  prepared.session = session_key(request_body, PromptApi::completions, req.get_header_value("x-session-id"));
  prepared.protocol = "completions";
  prepared.stream = request.params.stream;
  StartedGeneration started = start_generation(ctx, std::move(prepared), id, arrival, res);

  if (request.params.stream) {
    auto job = std::make_shared<StreamJob>(std::move(started));
    StreamJob* raw = job.get();
    if (!echo_text.empty()) {
      job->first_chunks = [=] { return std::vector<json>{completion_object(id, created, model_name, echo_text, nullptr, nullptr)}; };
    }
    auto logprobs = std::make_shared<LegacyLogprobs>();
    const bool want_logprobs = request.params.logprobs;
    job->output_chunks = [=, &tokenizer](PipelineOutput& output) {
      json lp = nullptr;
      if (want_logprobs) {
        LegacyLogprobs step;
        step.offset = logprobs->offset;
        step.add(tokenizer, output.logprobs);
        logprobs->offset = step.offset;
        lp = step.to_json();
      }
      json finish = output.finish_reason == engine::FinishReason::None
                        ? json(nullptr)
                        : json(finish_reason_string(output.finish_reason, false));
      return std::vector<json>{completion_object(id, created, model_name, output.delta.content, lp, finish)};
    };
    if (request.params.include_usage) {
      job->last_chunks = [=] {
        json chunk = completion_object(id, created, model_name, "", nullptr, nullptr);
        chunk["choices"] = json::array();
        chunk["usage"] = usage_json(raw->gen.num_prompt_tokens, raw->pipeline.num_generated_tokens(),
                                    raw->pipeline.num_cached_tokens());
        return std::vector<json>{chunk};
      };
    }
    serve_sse_stream(ctx, res, job);
    return;
  }

  std::string text = echo_text;
  LegacyLogprobs logprobs;
  GenerationCallbacks callbacks;
  callbacks.on_output = [&](PipelineOutput& output) {
    text += output.delta.content;
    if (request.params.logprobs) logprobs.add(tokenizer, output.logprobs);
    return true;
  };
  drive_generation(ctx, started.gen, started.pipeline, callbacks);
  const TokenTextPipeline& pipeline = started.pipeline;
  json body = completion_object(id, created, model_name, text,
                                request.params.logprobs ? logprobs.to_json() : json(nullptr),
                                finish_reason_string(pipeline.finish_reason(), false));
  body["usage"] =
      usage_json(started.gen.num_prompt_tokens, pipeline.num_generated_tokens(), pipeline.num_cached_tokens());
  res.set_content(dump_json(body), "application/json");
}

}  // namespace llmesh::api
