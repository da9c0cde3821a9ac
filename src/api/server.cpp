#include "api/server.h"

#include <httplib.h>

#include <chrono>
#include <thread>

#include "api/access_log.h"
#include "api/anthropic_error.h"
#include "api/anthropic_messages.h"
#include "api/api_error.h"
#include "api/api_keys.h"
#include "api/cache_view.h"
#include "api/console_views.h"
#include "api/cors_policy.h"
#include "api/generation_pipeline.h"
#include "api/http_listener.h"
#include "api/openai_chat.h"
#include "api/openai_completions.h"
#include "api/openai_responses.h"
#include "api/server_context.h"
#include "api/sse.h"
#include "console/console_routes.h"
#include "console/metrics_history.h"
#include "core/error.h"
#include "core/log.h"

namespace llmesh::api {

using nlohmann::json;

namespace {

void send_error(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(dump_json(body), "application/json");
}

void send_json(httplib::Response& res, const json& body) { res.set_content(dump_json(body), "application/json"); }

std::string reason_type(int status) {
  switch (status) {
    case 401: return "authentication_error";
    case 404: return "not_found_error";
    case 405: return "invalid_request_error";
    case 408: return "timeout_error";
    case 413: return "invalid_request_error";
    case 429: return "rate_limit_error";
    case 503: return "service_unavailable";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

// The error body in the shape of the API the path belongs to: Anthropic's on
// /v1/messages*, OpenAI's elsewhere.
json error_body_for(const std::string& path, int status, std::string_view message, std::string_view openai_type,
                    std::string_view param = "", std::string_view code = "") {
  if (is_anthropic_path(path)) return anthropic_error_body(status, message);
  return error_body(message, openai_type, param, code);
}

ListenerOptions listener_options(const ServerOptions& o) {
  ListenerOptions l;
  l.num_workers = std::max(4, o.num_http_threads);
  l.limits.request_read_seconds = o.request_read_timeout_s;
  l.limits.max_header_bytes = o.max_header_bytes;
  l.tls_cert_file = o.tls_cert_file;
  l.tls_key_file = o.tls_key_file;
  return l;
}

bool has_body(const httplib::Request& req) {
  const std::string length = req.get_header_value("Content-Length");
  return (!length.empty() && length != "0") || req.has_header("Transfer-Encoding");
}

// The id of the API key a request presents, for the access log (this thread's request).
thread_local std::string t_key_id;

// Token ids from a JSON array (ApiError naming `param`).
std::vector<int32_t> token_ids_field(const json& body, const char* param, int32_t vocab_size) {
  auto it = body.find(param);
  if (it == body.end() || !it->is_array()) fail_param(param, "'{}' must be an array of token ids", param);
  std::vector<int32_t> ids;
  for (const auto& v : *it) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= vocab_size) {
      fail_param(param, "'{}' must hold token ids in [0, {})", param, vocab_size);
    }
    ids.push_back(int32_t(v.get<int64_t>()));
  }
  return ids;
}

}  // namespace

struct ApiServer::Impl {
  ServerContext ctx;
  ApiKeys api_keys;
  CorsPolicy cors;
  std::unique_ptr<AccessLog> access_log;
  HttpListener http;
  std::unique_ptr<console::MetricsHistory> history;  // the console's charts (sampled from the engine)

  explicit Impl(ServerOptions options)
      : api_keys(ApiKeys::load(options.api_keys, options.api_key_file)),
        cors(options.cors_origins),
        access_log(options.access_log_path.empty() ? nullptr : std::make_unique<AccessLog>(options.access_log_path)),
        http(listener_options(options)) {
    ctx.options = std::move(options);
    ctx.started_at = console::unix_seconds_now();
    ctx.requests.set_capacity(ctx.options.console_requests);
    if (!ctx.options.models_dir.empty()) ctx.library = std::make_unique<runtime::ModelLibrary>(ctx.options.models_dir);
    history = std::make_unique<console::MetricsHistory>(ServeHistorySampler(ctx));
    setup();
  }

  // Runs a handler, turning exceptions into errors shaped for the path's API.
  template <typename Fn>
  httplib::Server::Handler guarded(Fn fn) {
    return [this, fn](const httplib::Request& req, httplib::Response& res) {
      try {
        fn(req, res);
      } catch (const ApiError& e) {
        ctx.metrics.count_http_error(e.http_status());
        send_error(res, e.http_status(),
                   is_anthropic_path(req.path) ? anthropic_error_body(e.http_status(), e.what()) : e.to_json());
        if (e.http_status() == 429) res.set_header("Retry-After", "1");
      } catch (const nlohmann::json::exception& e) {  // a field of the wrong type read with .value()
        ctx.metrics.count_http_error(400);
        send_error(
            res, 400,
            error_body_for(req.path, 400, std::string("malformed request: ") + e.what(), "invalid_request_error"));
      } catch (const Error& e) {
        ctx.metrics.count_http_error(400);
        send_error(res, 400, error_body_for(req.path, 400, e.what(), "invalid_request_error"));
      } catch (const std::exception& e) {
        log_error("{} {}: {}", req.method, req.path, e.what());
        ctx.metrics.count_http_error(500);
        send_error(res, 500, error_body_for(req.path, 500, std::string("internal error: ") + e.what(), "server_error"));
      }
    };
  }

  void setup() {
    http.set_payload_max_length(ctx.options.max_body_bytes);

    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      const auto handled = pre_route(req, res);
      // Answered before its body was read: the rest is still in the socket, so the
      // connection closes after this response (http_listener.cpp) — say so.
      if (handled == httplib::Server::HandlerResponse::Handled && has_body(req))
        res.set_header("Connection", "close");
      return handled;
    });
    // Statuses httplib sets itself (404 no route, 413 body too large, 400 bad framing) get
    // OpenAI bodies, or Anthropic ones on /v1/messages*.
    http.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req,
                                                                        httplib::Response& res) {
      if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
      // A read the connection's limits ended (http_connection.h) is a 408/431/414, not a bare 400.
      if (const HttpConnection* connection = HttpListener::current_connection(); connection && res.status == 400) {
        if (connection->failure() == ReadFailure::Timeout) res.status = 408;
        if (connection->failure() == ReadFailure::HeadersTooLarge) res.status = 431;
        if (connection->failure() == ReadFailure::RequestLineTooLong) res.status = 414;
        if (res.status != 400) ctx.metrics.count_http_error(res.status);
      }
      std::string message = fmt::format("HTTP {}", res.status);
      if (res.status == 404) message = fmt::format("No route for {} {}", req.method, req.path);
      if (res.status == 400) message = "Malformed HTTP request (a POST without a body needs 'Content-Length: 0')";
      if (res.status == 408 || res.status == 414 || res.status == 431) message = read_limit_message(res.status);
      if (res.status == 413) {
        message = fmt::format("The request body is larger than the limit of {} bytes", ctx.options.max_body_bytes);
        ctx.metrics.count_http_error(413);
      }
      res.set_content(dump_json(error_body_for(req.path, res.status, message, reason_type(res.status))),
                      "application/json");
      return httplib::Server::HandlerResponse::Handled;
    }));

    http.set_read_failure_body([this](int status, const std::string& path) {
      ctx.metrics.count_http_error(status);
      return dump_json(error_body_for(path, status, read_limit_message(status), reason_type(status)));
    });
    if (access_log) {
      http.set_logger([this](const httplib::Request& req, const httplib::Response& res) { log_access(req, res); });
    }

    http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
      if (!ctx.ready.load()) {
        send_error(res, 503, error_body("The model is still loading", "service_unavailable"));
        return;
      }
      if (ctx.failed.load()) {  // a supervisor restarts the job
        send_error(res, 503, {{"status", "failed"}, {"error", {{"message", ctx.failure}, {"type", "server_error"}}}});
        return;
      }
      if (ctx.draining.load()) {  // load balancers take the server out of rotation
        send_error(res, 503, {{"status", "draining"}});
        return;
      }
      send_json(res, {{"status", "ok"}});
    });
    http.Get("/v1/models", guarded([this](const httplib::Request&, httplib::Response& res) {
      send_json(res, {{"object", "list"},
                      {"data", json::array({{{"id", ctx.options.served_model_name},
                                             {"object", "model"},
                                             {"created", 0},
                                             {"owned_by", "llmesh"},
                                             {"max_model_len", ctx.context_tokens()}}})}});
    }));
    http.Post("/v1/chat/completions", guarded([this](const httplib::Request& req, httplib::Response& res) {
      handle_chat_completions(ctx, req, res);
    }));
    http.Post("/v1/completions", guarded([this](const httplib::Request& req, httplib::Response& res) {
      handle_completions(ctx, req, res);
    }));
    http.Post("/v1/responses", guarded([this](const httplib::Request& req, httplib::Response& res) {
                handle_responses(ctx, req, res);
              }));
    http.Post("/v1/messages",
              guarded([this](const httplib::Request& req, httplib::Response& res) { handle_messages(ctx, req, res); }));
    http.Post("/v1/messages/count_tokens", guarded([this](const httplib::Request& req, httplib::Response& res) {
                handle_count_tokens(ctx, req, res);
              }));
    http.Post("/tokenize", guarded([this](const httplib::Request& req, httplib::Response& res) { tokenize(req, res); }));
    http.Post("/detokenize", guarded([this](const httplib::Request& req, httplib::Response& res) {
      const json body = parse_json_body(req.body);
      const auto ids = token_ids_field(body, "tokens", ctx.model->tokenizer->vocab_size());
      send_json(res, {{"prompt", ctx.model->tokenizer->decode(ids)}});
    }));
    http.Post("/apply-template", guarded([this](const httplib::Request& req, httplib::Response& res) {
      const json body = parse_json_body(req.body);
      const ChatCompletionRequest request = parse_chat_completion_request(body);
      const bool add_generation_prompt = body.value("add_generation_prompt", true);
      send_json(res, {{"prompt", render_prompt(ctx, to_generation_request(request, req.body), add_generation_prompt)}});
    }));
    // ?tiers=true also empties the host and disk tiers (the pool alone by default).
    http.Post("/flush_cache", guarded([this](const httplib::Request& req, httplib::Response& res) {
      const std::string tiers = req.get_param_value("tiers");
      if (!tiers.empty() && tiers != "true" && tiers != "false" && tiers != "1" && tiers != "0")
        fail_param("tiers", "tiers must be true or false (got '{}')", tiers);
      const int64_t num_dropped = ctx.engine->flush_cache(tiers == "true" || tiers == "1");
      send_json(res, {{"status", "ok"}, {"num_blocks_dropped", num_dropped}});
    }));
    http.Get("/v1/sessions", guarded([this](const httplib::Request&, httplib::Response& res) {
      send_json(res, ctx.sessions.view());
    }));
    http.Get("/v1/cache", guarded([this](const httplib::Request&, httplib::Response& res) {
      send_json(res, cache_view_json(ctx.engine->stats()));
    }));
    console::ConsoleViews views = serve_console_views(ctx);
    views.history = [this](int64_t since_ms) { return history->since(since_ms); };
    console::add_console_routes(http, std::move(views),
                                [this](httplib::Server::Handler handler) { return guarded(std::move(handler)); });
    http.Get("/metrics", guarded([this](const httplib::Request&, httplib::Response& res) {
      res.set_content(ctx.metrics.render(ctx.engine->stats(), ctx.options.served_model_name) +
                          render_listener_metrics(http.stats(), ctx.options.served_model_name),
                      "text/plain; version=0.0.4");
    }));
  }

  // CORS, overload, authentication and loading state, before routing.
  httplib::Server::HandlerResponse pre_route(const httplib::Request& req, httplib::Response& res) {
    t_key_id.clear();
    cors.apply(req, res);
    if (CorsPolicy::is_preflight(req)) return httplib::Server::HandlerResponse::Handled;  // 204, no credentials
    if (HttpListener::overloaded()) {
      ctx.metrics.count_http_error(503);
      send_error(res, 503,
                 error_body_for(req.path, 503,
                                fmt::format("The server is busy: all {} connections are in use; retry shortly",
                                            http.stats().num_workers),
                                "service_unavailable"));
      res.set_header("Retry-After", "1");
      return httplib::Server::HandlerResponse::Handled;
    }
    // The console's page and files carry no data (its /console/api/ calls take the key).
    if (req.path == "/health" || console::is_public_console_path(req.path))
      return httplib::Server::HandlerResponse::Unhandled;
    const std::optional<std::string> key_id =
        api_keys.match(req.get_header_value("Authorization"), req.get_header_value("x-api-key"));
    if (key_id) t_key_id = *key_id;
    if (api_keys.enabled() && !key_id) {
      ctx.metrics.count_http_error(401);
      send_error(res, 401,
                 error_body_for(req.path, 401,
                                "Missing or invalid API key: send 'Authorization: Bearer KEY' or 'x-api-key: KEY'",
                                "authentication_error", "", "invalid_api_key"));
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.path.starts_with("/console/api/")) return httplib::Server::HandlerResponse::Unhandled;  // shows loading/draining
    if (!ctx.ready.load()) {
      send_error(res, 503, error_body_for(req.path, 503, "The model is still loading", "service_unavailable"));
      res.set_header("Retry-After", "1");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (ctx.failed.load()) {
      send_error(res, 503, error_body_for(req.path, 503, ctx.failure, "service_unavailable"));
      res.set_header("Connection", "close");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (ctx.draining.load()) {
      send_error(res, 503,
                 error_body_for(req.path, 503, "The server is shutting down; retry on another server or later",
                                "service_unavailable"));
      res.set_header("Retry-After", "5");
      res.set_header("Connection", "close");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  }

  // Why a connection limit (http_connection.h) ended a request.
  std::string read_limit_message(int status) const {
    if (status == 408) {
      return fmt::format("The request did not arrive within {} s (--request-timeout)", ctx.options.request_read_timeout_s);
    }
    if (status == 414) return "The request line (method and URL) is too long";
    return fmt::format("The request's headers are larger than the limit ({} bytes in all, 8000 per line)",
                       ctx.options.max_header_bytes);
  }

  void log_access(const httplib::Request& req, const httplib::Response& res) {
    AccessRecord r;
    r.remote = req.remote_addr;
    r.method = req.method;
    r.path = req.path;
    r.status = res.status;
    r.request_id = res.get_header_value("x-request-id");
    r.key_id = t_key_id;
    if (const HttpConnection* connection = HttpListener::current_connection()) {
      r.bytes = connection->bytes_written();
      r.duration_ms = std::chrono::duration<double, std::milli>(Clock::now() - connection->request_start()).count();
    }
    access_log->write(r);
  }

  // {"prompt": text} or {"messages": [...]} (rendered with the chat template) -> token ids.
  void tokenize(const httplib::Request& req, httplib::Response& res) {
    const json body = parse_json_body(req.body);
    std::vector<int32_t> ids;
    if (body.contains("messages")) {
      const ChatCompletionRequest request = parse_chat_completion_request(body);
      const bool add_generation_prompt = body.value("add_generation_prompt", true);
      ids = tokenize_prompt(ctx, to_generation_request(request, req.body), add_generation_prompt).ids;
    } else {
      auto prompt = body.find("prompt");
      if (prompt == body.end() || !prompt->is_string()) fail_param("prompt", "'prompt' (a string) or 'messages' is required");
      const bool add_special = body.value("add_special_tokens", true);
      ids = add_special ? ctx.model->encode_prompt(prompt->get<std::string>())
                        : ctx.model->tokenizer->encode(prompt->get<std::string>());
    }
    send_json(res, {{"tokens", ids}, {"count", ids.size()}, {"max_model_len", ctx.context_tokens()}});
  }
};

ApiServer::ApiServer(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
ApiServer::~ApiServer() { stop(); }

int ApiServer::bind() {
  const auto& o = impl_->ctx.options;
  if (o.port == 0) {
    const int port = impl_->http.bind_any(o.host);
    check(port > 0, "cannot listen on {} (any port)", o.host);
    impl_->ctx.port = port;
    return port;
  }
  check(impl_->http.bind(o.host, o.port), "cannot listen on {}:{} (address in use or not available)", o.host,
        o.port);
  impl_->ctx.port = o.port;
  return o.port;
}

void ApiServer::listen() { impl_->http.listen_after_bind(); }

void ApiServer::stop() {
  impl_->history->stop();  // it samples the engine, which its owner destroys after this
  impl_->http.shut_down();
}

void ApiServer::set_failed(const std::string& reason) {
  if (impl_->ctx.failed.load()) return;
  impl_->ctx.failure = reason;
  impl_->ctx.failed.store(true);
}

void ApiServer::drain(double timeout_s) {
  ServerContext& ctx = impl_->ctx;
  ctx.draining.store(true);
  auto num_active = [&] {
    if (!ctx.engine) return int64_t(0);
    const engine::EngineStats s = ctx.engine->stats();
    return s.num_running + s.num_waiting;
  };
  // Waits until no request is left in the engine, or `seconds` have passed.
  auto wait_idle = [&](double seconds) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    while (num_active() > 0 && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  };
  wait_idle(timeout_s);
  if (const int64_t left = num_active(); left > 0) {
    log_warn("drain: {} requests still running after {} s; cancelling them", left, timeout_s);
    ctx.cancel_generations.store(true);
    wait_idle(5.0);
  }
  stop();  // handlers still writing finish first: listen() joins its workers
}

void ApiServer::set_ready(runtime::LoadedModel* model, engine::Engine* engine, int num_compute_threads) {
  impl_->ctx.num_compute_threads = num_compute_threads;
  impl_->ctx.model = model;
  impl_->ctx.engine = engine;
  impl_->ctx.ready.store(true);
}

}  // namespace llmesh::api
