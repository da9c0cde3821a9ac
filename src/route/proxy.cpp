#include "route/proxy.h"

#include <fmt/format.h>
#include <strings.h>

#include <mutex>

#include "api/anthropic_error.h"
#include "api/api_error.h"
#include "api/server_context.h"
#include "api/sse.h"
#include "core/log.h"
#include "route/anthropic_bridge.h"
#include "route/response_observer.h"
#include "route/route_console.h"
#include "route/upstream_exchange.h"

namespace llmesh::route {

using nlohmann::json;

namespace {

constexpr auto kFirstBodyByteWait = std::chrono::seconds(2);  // after the head: then commit to this upstream
constexpr auto kProviderWait = std::chrono::milliseconds(500);
constexpr double kKeepaliveIdleS = 2.0;  // an SSE comment after this long without a write

bool iequals(const std::string& a, const char* b) { return strcasecmp(a.c_str(), b) == 0; }

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

bool retryable_status(int status) { return status == 429 || status >= 500; }

// The error body in the shape of the API the path belongs to.
json error_body_for(const std::string& path, int status, const std::string& message, const char* openai_type) {
  if (api::is_anthropic_path(path)) return api::anthropic_error_body(status, message);
  return api::error_body(message, openai_type);
}

// One in-band SSE error event, for a stream whose upstream failed after bytes went out.
std::string sse_error_event(const std::string& path, const std::string& message) {
  if (api::is_anthropic_path(path)) return api::sse_event(api::anthropic_error_body(502, message));
  if (path == "/v1/responses")
    return api::sse_event({{"type", "error"}, {"code", "upstream_error"}, {"message", message}, {"param", nullptr}});
  return api::sse_data(api::error_body(message, "upstream_error"));
}

// The request as the upstream gets it: as sent, or (bridged_body set) as an
// OpenAI chat completion.
// The model a bridged request names: the client's when the upstream serves it
// (or lists nothing), else the upstream's first listed model (Claude Code sends
// claude-* names; an OpenAI server answers 404 to names it does not serve).
std::string bridged_model(const std::string& requested, const UpstreamSpec& spec) {
  if (spec.models.empty() || serves_model(spec, requested)) return requested;
  return spec.models.front();
}

// Claude Code asks for max_tokens 32000 or 64000; an OpenAI server refuses a
// request whose prompt + max_tokens exceed its context. When that looks likely
// (the prompt estimated at 4 bytes a token), max_tokens is left out and the
// server gives whatever fits, as `llmesh serve` clamps it.
void fit_max_tokens(nlohmann::ordered_json& chat, int64_t context_tokens) {
  auto max = chat.find("max_tokens");
  if (context_tokens <= 0 || max == chat.end() || !max->is_number_integer()) return;
  int64_t prompt_bytes = 0;
  for (const char* key : {"messages", "tools"})
    if (chat.contains(key)) prompt_bytes += int64_t(chat[key].dump().size());
  if (max->get<int64_t>() + prompt_bytes / 4 > context_tokens) chat.erase("max_tokens");
}

httplib::Request upstream_request(const httplib::Request& req, const UpstreamSpec& spec,
                                  const nlohmann::ordered_json* bridged_chat, int64_t context_tokens) {
  httplib::Request up;
  up.method = req.method;
  up.path = req.target.empty() ? req.path : req.target;  // with the query (Claude Code sends ?beta=true)
  up.body = req.body;
  const bool bridged_body = bridged_chat != nullptr;
  if (bridged_chat != nullptr) {
    nlohmann::ordered_json chat = *bridged_chat;
    chat["model"] = bridged_model(chat.value("model", std::string()), spec);
    fit_max_tokens(chat, context_tokens);
    up.path = "/v1/chat/completions";
    up.body = chat.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  }
  for (const auto& [name, value] : req.headers) {
    if (is_unforwarded_request_header(name)) continue;
    if (bridged_body && iequals(name, "Content-Type")) continue;
    if (!spec.api_key.empty() && (iequals(name, "Authorization") || iequals(name, "x-api-key"))) continue;
    up.headers.emplace(name, value);
  }
  if (!spec.api_key.empty()) {
    up.headers.emplace("Authorization", "Bearer " + spec.api_key);
    up.headers.emplace("x-api-key", spec.api_key);
  }
  if (bridged_body) up.headers.emplace("Content-Type", "application/json");
  up.headers.emplace("Accept-Encoding", "identity");  // bytes pass through untouched
  if (!req.remote_addr.empty()) up.headers.emplace("X-Forwarded-For", req.remote_addr);
  return up;
}

// Everything one proxied request needs after the handler returns: shared by the
// content provider and the releaser.
struct ProxyCall {
  ProxyCall(RouteContext& c, RouteRequest r) : ctx(c), request(std::move(r)), arrival(Clock::now()) {}

  RouteContext& ctx;
  RouteRequest request;
  Clock::time_point arrival;
  std::string request_id = api::make_request_id("route-");  // the console's key for it
  Router::Pick pick;
  std::vector<std::string> retried_from;
  std::shared_ptr<UpstreamExchange> exchange;
  std::unique_ptr<ResponseObserver> observer;
  std::unique_ptr<ResponseTranslator> translator;  // set when the answer changes protocol (the bridge)
  nlohmann::ordered_json bridged_chat;             // /v1/messages as a chat completion, for kind=openai
  std::vector<std::string> bridged_stops;
  bool sse = false;
  int status = 0;
  bool completed = false;        // the upstream response ended and all of it was passed on
  bool upstream_failed = false;  // connection or read error (before or after bytes went out)
  bool client_gone = false;
  std::string error;
  Clock::time_point last_write;

  std::once_flag finished;

  // Counts and logs the request (once); the upstream is no longer in flight.
  void finish() {
    std::call_once(finished, [this] {
      if (exchange) exchange->cancel();  // no-op when it ended
      RequestOutcome o;
      o.http_status = status;
      o.upstream_error = upstream_failed || retryable_status(status);
      o.client_gone = client_gone;
      o.duration_s = seconds_since(arrival);
      if (observer) {
        o.ttft_s = observer->first_output_s();
        o.usage = observer->usage();
        if (error.empty()) error = observer->error();
      }
      if (pick.upstream >= 0) ctx.router.finish(pick.upstream, o);
      log(o);
      record(o);
    });
  }

  void log(const RequestOutcome& o) {
    if (ctx.request_log == nullptr) return;
    json r = {{"time", utc_timestamp_now()},
              {"path", request.path},
              {"model", request.model},
              {"stream", request.stream},
              {"status", o.http_status},
              {"duration_ms", o.duration_s * 1000.0}};
    if (request.session.source != api::SessionKeySource::none) {
      r["session"] = fmt::format("{:016x}", request.session.hash);
      r["session_source"] = api::session_key_source_name(request.session.source);
    }
    r["upstream"] = pick.upstream >= 0 ? json(ctx.router.upstream(pick.upstream).name) : json(nullptr);
    r["reason"] = decision_reason_name(pick.reason);
    if (!retried_from.empty()) r["retried_from"] = retried_from;
    if (o.ttft_s >= 0) r["ttft_ms"] = o.ttft_s * 1000.0;
    if (o.usage.prompt_tokens >= 0) r["prompt_tokens"] = o.usage.prompt_tokens;
    if (o.usage.cached_tokens >= 0) r["cached_tokens"] = o.usage.cached_tokens;
    if (o.usage.output_tokens >= 0) r["output_tokens"] = o.usage.output_tokens;
    if (!error.empty()) r["error"] = error;
    if (client_gone) r["client_gone"] = true;
    if (ctx.request_log->log_prompts() && request.body.is_object()) {
      json prompt = json::object();
      for (const char* key : {"system", "instructions", "messages", "input", "prompt", "tools"})
        if (request.body.contains(key)) prompt[key] = request.body[key];
      r["prompt"] = std::move(prompt);
    }
    ctx.request_log->write(r);
  }

  // The console's record of it (console/request_ring.h).
  void record(const RequestOutcome& o) {
    console::RequestRecord r;
    r.id = request_id;
    r.protocol = protocol_of_path(request.path);
    r.model = request.model;
    if (request.session.source != api::SessionKeySource::none) r.session = fmt::format("{:016x}", request.session.hash);
    if (pick.upstream >= 0) r.upstream = ctx.router.upstream(pick.upstream).name;
    r.stream = request.stream;
    r.finished_at = console::unix_seconds_now();
    r.arrived_at = r.finished_at - o.duration_s;
    r.status = o.http_status;
    const bool failed = o.upstream_error || o.http_status == 0 || o.http_status >= 400;
    r.outcome = client_gone ? "cancelled" : failed ? "error" : "ok";
    r.error = error;
    r.num_prompt_tokens = std::max<int64_t>(0, o.usage.prompt_tokens);
    r.num_cached_tokens = std::max<int64_t>(0, o.usage.cached_tokens);
    r.num_output_tokens = std::max<int64_t>(0, o.usage.output_tokens);
    if (o.ttft_s >= 0) r.ttft_s = o.ttft_s;
    // Only a stream's first byte is its first token: a whole answer arrives at once.
    if (request.stream && r.ttft_s && r.num_output_tokens > 1) r.tpot_s = (o.duration_s - *r.ttft_s) / double(r.num_output_tokens - 1);
    if (r.outcome != "ok") r.finish_reason = r.outcome == "cancelled" ? "cancelled" : "error";  // else unknown here
    // What the router sees of the timeline: the first byte (the upstream's phases are its own) and the end.
    if (r.ttft_s) r.timeline.push_back({{"phase", "first_token"}, {"start_s", *r.ttft_s}, {"end_s", *r.ttft_s}});
    r.timeline.push_back({{"phase", "done"}, {"start_s", o.duration_s}, {"end_s", o.duration_s}});
    ctx.requests.add(std::move(r));
  }

  // One provider call: pass on what arrived, end the stream, or keep the connection busy.
  // Upstream bytes -> the client's bytes (translated when bridging); observed on the way.
  std::string client_bytes(std::string bytes) {
    if (translator) bytes = translator->translate(bytes);
    if (!bytes.empty()) observer->feed(bytes, seconds_since(arrival));
    return bytes;
  }
  std::string client_tail(bool upstream_ok) {
    std::string tail = translator ? translator->finish(upstream_ok) : "";
    if (!tail.empty()) observer->feed(tail, seconds_since(arrival));
    observer->finish(seconds_since(arrival));
    return tail;
  }

  bool provide(httplib::DataSink& sink) {
    std::string upstream_bytes;
    const UpstreamExchange::Progress p = exchange->take(upstream_bytes, kProviderWait);
    if (!upstream_bytes.empty()) {
      const std::string bytes = client_bytes(std::move(upstream_bytes));
      if (!bytes.empty()) {
        if (!sink.write(bytes.data(), bytes.size())) return gone();
        last_write = Clock::now();
      }
    }
    switch (p) {
      case UpstreamExchange::Progress::finished: {
        const std::string tail = client_tail(true);
        if (!tail.empty() && !sink.write(tail.data(), tail.size())) return gone();
        completed = true;
        // Accounted before the body's last chunk goes out: a client that sends its next turn the
        // moment this one ends must find the upstream no longer holding it (bounded load).
        finish();
        sink.done();
        return true;
      }
      case UpstreamExchange::Progress::failed: {
        upstream_failed = true;
        error = fmt::format("upstream {} failed mid-response: {}", ctx.router.upstream(pick.upstream).name,
                            exchange->error_text());
        log_warn("llmesh route: {} {}", request.path, error);
        ctx.router.report_failure(pick.upstream, exchange->error_text());
        if (!sse) return false;  // a cut body must not look complete: close the connection
        if (translator) {  // the bridge ends its stream in Anthropic's words
          const std::string tail = client_tail(false);
          sink.write(tail.data(), tail.size());
        } else if (observer->at_event_boundary()) {
          const std::string event = sse_error_event(request.path, error);
          sink.write(event.data(), event.size());
        }
        finish();
        sink.done();
        return true;
      }
      case UpstreamExchange::Progress::waiting:
        if (sink.is_writable && !sink.is_writable()) return gone();
        if (sse && observer->at_event_boundary() &&
            std::chrono::duration<double>(Clock::now() - last_write).count() >= kKeepaliveIdleS) {
          const std::string comment = api::sse_comment("keepalive");
          if (!sink.write(comment.data(), comment.size())) return gone();
          last_write = Clock::now();
        }
        return true;
      case UpstreamExchange::Progress::bytes:
        return true;
    }
    return true;
  }

  bool gone() {
    client_gone = true;
    exchange->cancel();
    return false;
  }
};

void respond_error(httplib::Response& res, const std::string& path, int status, const std::string& message,
                   const char* openai_type) {
  res.status = status;
  res.set_content(api::dump_json(error_body_for(path, status, message, openai_type)), "application/json");
}

// Anthropic Messages to an upstream that speaks only OpenAI chat.
bool bridges(const ProxyCall& call, const UpstreamSpec& spec) {
  return spec.kind == UpstreamKind::openai && call.request.path == "/v1/messages";
}

struct Attempt {
  enum Kind { committed, bad_status, failed } kind = failed;
  UpstreamExchange::Progress progress = UpstreamExchange::Progress::failed;
  std::shared_ptr<UpstreamExchange> exchange;
  std::string error;
};

// Starts the request on one upstream and waits for its first bytes; a stale
// kept-alive connection gets one more try on a fresh connection.
Attempt try_upstream(RouteContext& ctx, const httplib::Request& req, const ProxyCall& call, int upstream) {
  const UpstreamSpec& spec = ctx.router.upstream(upstream);
  const nlohmann::ordered_json* bridged = bridges(call, spec) ? &call.bridged_chat : nullptr;
  Attempt a;
  for (int connection_try = 0; connection_try < 2; ++connection_try) {
    a.exchange = UpstreamExchange::start(ctx.router.connections(upstream), upstream_request(req, spec, bridged, ctx.router.context_tokens(upstream)));
    a.progress = a.exchange->wait_first_bytes(Clock::now() + kFirstBodyByteWait);
    const bool stale = a.progress == UpstreamExchange::Progress::failed && a.exchange->connection_reused() &&
                       !a.exchange->head_received();
    if (!stale) break;
  }
  if (a.progress == UpstreamExchange::Progress::failed) {
    a.kind = Attempt::failed;
    a.error = a.exchange->error_text();
  } else {
    a.kind = retryable_status(a.exchange->status()) ? Attempt::bad_status : Attempt::committed;
  }
  return a;
}

// Sends the upstream's head, then its body: whole when it is complete already, else streamed.
void commit(const std::shared_ptr<ProxyCall>& call, const Attempt& a, httplib::Response& res) {
  call->exchange = a.exchange;
  call->status = a.exchange->status();
  res.status = call->status;
  std::string content_type = "application/octet-stream";
  for (const auto& [name, value] : a.exchange->headers()) {
    if (iequals(name, "Content-Type")) {
      content_type = value;
      continue;
    }
    if (!is_unforwarded_response_header(name)) res.headers.emplace(name, value);
  }
  const UpstreamSpec& spec = call->ctx.router.upstream(call->pick.upstream);
  res.set_header("x-llmesh-upstream", spec.name);
  if (bridges(*call, spec)) {
    call->translator = std::make_unique<MessagesFromChat>(call->request.model, call->bridged_stops);
    call->translator->begin(call->status, content_type);
    content_type = call->translator->content_type();
    res.set_header("x-llmesh-bridge", "anthropic-messages-to-openai-chat");
  }
  call->sse = content_type.rfind("text/event-stream", 0) == 0;
  call->observer = std::make_unique<ResponseObserver>(call->sse);
  call->last_write = Clock::now();
  if (a.progress == UpstreamExchange::Progress::finished) {
    std::string upstream_body;
    a.exchange->take(upstream_body, std::chrono::milliseconds(0));
    std::string body = call->client_bytes(std::move(upstream_body));
    body += call->client_tail(true);
    call->completed = true;
    res.set_content(std::move(body), content_type);
    call->finish();
    return;
  }
  res.set_chunked_content_provider(
      content_type, [call](size_t, httplib::DataSink& sink) { return call->provide(sink); },
      [call](bool success) {
        if (!call->completed && !call->upstream_failed) call->client_gone = true;
        call->finish();
      });
}

}  // namespace

bool is_unforwarded_request_header(const std::string& name) {
  for (const char* h : {"Host", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "Proxy-Connection",
                        "TE", "Trailer", "Upgrade", "Accept-Encoding", "REMOTE_ADDR", "REMOTE_PORT", "LOCAL_ADDR",
                        "LOCAL_PORT", "Expect"})
    if (iequals(name, h)) return true;
  return false;
}

bool is_unforwarded_response_header(const std::string& name) {
  for (const char* h : {"Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "Proxy-Connection", "TE",
                        "Trailer", "Upgrade"})
    if (iequals(name, h)) return true;
  return false;
}

void forward_request(RouteContext& ctx, const httplib::Request& req, httplib::Response& res) {
  RouteRequestOptions options;
  options.session_prefix_bytes = ctx.config().session_prefix_bytes;
  options.cache_block_bytes = ctx.config().cache_block_bytes;
  options.want_prefix_blocks = ctx.router.wants_prefix_blocks();
  auto call = std::make_shared<ProxyCall>(ctx, read_route_request(req, options));
  if (call->request.path == "/v1/messages/count_tokens") {
    if (ctx.count_tokens_locally) {  // --model: the chat template and tokenizer are here
      ctx.count_tokens_locally(req, res);
      return;
    }
    call->request.llmesh_only = true;  // an OpenAI-only upstream cannot count
  }
  if (call->request.path == "/v1/messages") {
    bool any_openai = false;
    for (int i = 0; i < ctx.router.num_upstreams(); ++i)
      any_openai = any_openai || ctx.router.upstream(i).kind == UpstreamKind::openai;
    if (any_openai) {  // validated here, before any upstream is picked: a bad body gets serve's 400
      call->bridged_chat = chat_body_for_messages(req.body);
      if (call->bridged_chat.contains("stop"))
        call->bridged_stops = call->bridged_chat["stop"].get<std::vector<std::string>>();
    }
  }

  std::vector<int> excluded;
  call->pick = ctx.router.pick(call->request, excluded);
  if (call->pick.upstream < 0 && call->request.llmesh_only) {
    call->status = 404;  // Claude Code then counts with max_tokens-1 generations, which the bridge answers exactly
    call->error = "count_tokens needs a healthy kind=llmesh upstream, or `llmesh route --model FILE` to count here";
    respond_error(res, call->request.path, 404, call->error, "not_found_error");
    call->finish();
    return;
  }
  if (call->pick.upstream < 0) {
    call->status = 503;
    if (call->pick.num_eligible > 0) {
      call->error = "every upstream that could take this request is at its max_concurrent";
    } else {
      call->error = fmt::format("no upstream can take this request: none of the {} upstreams is healthy{}{}",
                                ctx.router.num_upstreams(), call->request.model.empty() ? "" : " and serves model ",
                                call->request.model);
    }
    respond_error(res, call->request.path, 503, call->error, "service_unavailable");
    res.set_header("Retry-After", "1");
    call->finish();
    return;
  }
  constexpr int kMaxUpstreams = 2;  // the first choice and one retry elsewhere
  for (int attempt = 1;; ++attempt) {
    Attempt a = try_upstream(ctx, req, *call, call->pick.upstream);
    if (a.kind == Attempt::committed) {
      commit(call, a, res);
      return;
    }
    const int current = call->pick.upstream;
    const std::string name = ctx.router.upstream(current).name;
    if (a.kind == Attempt::failed) {
      call->error = fmt::format("upstream {}: {}", name, a.error);
      ctx.router.report_failure(current, a.error);
    } else {
      call->error = fmt::format("upstream {} answered HTTP {}", name, a.exchange->status());
    }
    // The next upstream first: with none, a bad answer is still passed on as it is.
    Router::Pick next;
    if (attempt < kMaxUpstreams) {
      excluded.push_back(current);
      next = ctx.router.pick(call->request, excluded);
    }
    if (next.upstream < 0) {
      log_info("llmesh route: {} {}; no other upstream to retry on", req.path, call->error);
      if (a.kind == Attempt::bad_status) {
        commit(call, a, res);
        return;
      }
      call->status = 502;
      call->upstream_failed = true;
      respond_error(res, call->request.path, 502, call->error, "upstream_error");
      call->finish();
      return;
    }
    log_info("llmesh route: {} {}; retrying on {}", req.path, call->error, ctx.router.upstream(next.upstream).name);
    a.exchange->cancel();
    RequestOutcome retried;
    retried.retried = true;
    ctx.router.finish(current, retried);
    call->retried_from.push_back(name);
    call->pick = next;
  }
}

}  // namespace llmesh::route
