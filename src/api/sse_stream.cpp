#include "api/sse_stream.h"

#include "api/api_error.h"
#include "api/sse.h"

namespace llmesh::api {

void serve_sse_stream(ServerContext& ctx, httplib::Response& res, std::shared_ptr<StreamJob> job) {
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  auto provider = [&ctx, job](size_t /*offset*/, httplib::DataSink& sink) -> bool {
    auto write_all = [&](const std::vector<nlohmann::json>& chunks) {
      for (const auto& chunk : chunks) {
        const std::string event = job->typed_events ? sse_event(chunk) : sse_data(chunk);
        if (!sink.write(event.data(), event.size())) return false;
      }
      return true;
    };
    if (job->first_chunks && !write_all(job->first_chunks())) {
      job->gen.handle->cancel();
      return false;
    }
    auto last_write = Clock::now();
    GenerationCallbacks callbacks;
    callbacks.on_output = [&](PipelineOutput& output) {
      last_write = Clock::now();
      return write_all(job->output_chunks(output));
    };
    callbacks.client_alive = [&] {
      if (sink.is_writable && !sink.is_writable()) return false;
      if (std::chrono::duration<double>(Clock::now() - last_write).count() < job->keepalive_interval_s) return true;
      last_write = Clock::now();
      if (job->keepalive_chunks) return write_all(job->keepalive_chunks());
      if (job->typed_events) return true;
      const std::string comment = sse_comment("keepalive");
      return sink.write(comment.data(), comment.size());
    };
    try {
      if (!drive_generation(ctx, job->gen, job->pipeline, callbacks)) return false;
    } catch (const ApiError& e) {
      // Headers are gone already: report in-band, the way OpenAI streams do.
      ctx.metrics.count_http_error(e.http_status());
      if (!write_all(job->error_chunks ? job->error_chunks(e) : std::vector<nlohmann::json>{e.to_json()})) return false;
      if (job->typed_events) {  // the error event is the last one
        sink.done();
        return true;
      }
    }
    if (job->last_chunks && !write_all(job->last_chunks())) return false;
    if (!job->typed_events) {
      const std::string done = sse_done();
      if (!sink.write(done.data(), done.size())) return false;
    }
    sink.done();
    return true;
  };
  // Runs when the response is released, also when the connection broke before the provider ran.
  auto release = [job](bool /*success*/) {
    if (!job->pipeline.finished()) job->gen.handle->cancel();
  };
  res.set_chunked_content_provider("text/event-stream", provider, release);
}

std::vector<nlohmann::json> collect_events(ServerContext& ctx, StreamJob& job) {
  std::vector<nlohmann::json> events;
  auto append = [&](std::vector<nlohmann::json> chunks) {
    for (auto& chunk : chunks) events.push_back(std::move(chunk));
  };
  if (job.first_chunks) append(job.first_chunks());
  GenerationCallbacks callbacks;
  callbacks.on_output = [&](PipelineOutput& output) {
    append(job.output_chunks(output));
    return true;
  };
  drive_generation(ctx, job.gen, job.pipeline, callbacks);
  if (job.last_chunks) append(job.last_chunks());
  return events;
}

}  // namespace llmesh::api
