#include "api/request_record.h"

#include <fmt/format.h>

namespace llmesh::api {

using nlohmann::json;

namespace {

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

std::string finish_reason_name(engine::FinishReason reason, bool stopped_by_string) {
  using engine::FinishReason;
  if (stopped_by_string) return "stop";
  switch (reason) {
    case FinishReason::Eos:
    case FinishReason::StopSequence: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::Repetition: return "loop_guard";
    case FinishReason::Aborted: return "cancelled";
    case FinishReason::None: break;
  }
  return "";
}

json phase(const char* name, double start_s, double end_s) {
  return {{"phase", name}, {"start_s", start_s}, {"end_s", end_s}};
}

}  // namespace

console::RequestRecord request_record(const ServerContext& ctx, const ActiveGeneration& gen,
                                      const TokenTextPipeline& pipeline, std::optional<Clock::time_point> first_token,
                                      const std::string& outcome, const std::string& error) {
  const auto now = Clock::now();
  const double now_unix = console::unix_seconds_now();
  console::RequestRecord r;
  r.id = gen.request_id;
  r.protocol = gen.protocol;
  r.model = ctx.options.served_model_name;
  if (gen.session.source != SessionKeySource::none) r.session = fmt::format("{:016x}", gen.session.hash);
  r.stream = gen.stream;
  r.finished_at = now_unix;
  r.arrived_at = now_unix - seconds_between(gen.arrival, now);
  r.outcome = outcome;
  r.error = error;
  r.status = outcome == "error" ? 500 : 200;
  r.num_prompt_tokens = gen.num_prompt_tokens;
  r.num_cached_tokens = pipeline.num_cached_tokens();
  r.num_output_tokens = pipeline.num_generated_tokens();
  r.finish_reason = outcome == "error" ? "error"
                    : outcome == "cancelled"
                        ? "cancelled"
                        : finish_reason_name(pipeline.finish_reason(), pipeline.stopped_by_string());
  const double end_s = seconds_between(gen.arrival, now);
  if (first_token) {
    r.ttft_s = seconds_between(gen.arrival, *first_token);
    if (r.num_output_tokens > 1) r.tpot_s = (end_s - *r.ttft_s) / double(r.num_output_tokens - 1);
  }

  // The timeline, in seconds from arrival: prepare, then the engine's phases, then ours.
  json& timeline = r.timeline;
  if (gen.handle) {
    const engine::RequestTimeline& t = gen.handle->timeline();
    timeline.push_back(phase("prepare", 0.0, seconds_between(gen.arrival, t.submitted())));
    using Kind = engine::TimelinePhase::Kind;
    for (const engine::TimelinePhase& p : t.phases()) {
      const double start = seconds_between(gen.arrival, p.start), stop = seconds_between(gen.arrival, p.end);
      if (p.kind == Kind::Queued) timeline.push_back(phase("queued", start, stop));
      if (p.kind == Kind::Preempted) timeline.push_back(phase("preempted", start, stop));
      if (p.kind == Kind::Prefill) {
        json chunk = phase("prefill", start, stop);
        chunk["tokens"] = p.num_tokens;
        if (p.num_cached_tokens > 0) chunk["cached_tokens"] = p.num_cached_tokens;
        timeline.push_back(std::move(chunk));
      }
    }
  }
  if (r.ttft_s) {
    timeline.push_back(phase("first_token", *r.ttft_s, *r.ttft_s));
    if (r.num_output_tokens > 1) {
      json decode = phase("decode", *r.ttft_s, end_s);
      decode["tokens"] = r.num_output_tokens - 1;
      timeline.push_back(std::move(decode));
    }
  }
  timeline.push_back(phase("done", end_s, end_s));
  return r;
}

}  // namespace llmesh::api
