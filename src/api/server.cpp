#include "api/server.h"

#include <httplib.h>

#include "api/anthropic_error.h"
#include "api/anthropic_messages.h"
#include "api/api_error.h"
#include "api/cache_view.h"
#include "api/generation_pipeline.h"
#include "api/openai_chat.h"
#include "api/openai_completions.h"
#include "api/openai_responses.h"
#include "api/server_context.h"
#include "api/sse.h"
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

bool authorized(const ServerOptions& options, const httplib::Request& req) {
  if (options.api_key.empty()) return true;
  const std::string bearer = req.get_header_value("Authorization");
  if (bearer == "Bearer " + options.api_key) return true;
  return req.get_header_value("x-api-key") == options.api_key;
}

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
  httplib::Server http;

  explicit Impl(ServerOptions options) {
    ctx.options = std::move(options);
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
    const int num_threads = std::max(4, ctx.options.num_http_threads);
    http.new_task_queue = [num_threads] { return new httplib::ThreadPool(size_t(num_threads)); };
    http.set_payload_max_length(ctx.options.max_body_bytes);
    http.set_read_timeout(60, 0);
    http.set_write_timeout(60, 0);
    http.set_keep_alive_timeout(5);  // an idle keep-alive connection holds a worker thread
    http.set_keep_alive_max_count(100000);  // clients reuse connections; do not close them every few requests
    // httplib writes the head and the body separately: with Nagle on, the body waits for the
    // client's delayed ACK, ~40 ms on every kept-alive request (and every proxied one).
    http.set_tcp_nodelay(true);

    // Authentication and loading state, before routing.
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (req.path == "/health") return httplib::Server::HandlerResponse::Unhandled;
      if (!authorized(ctx.options, req)) {
        ctx.metrics.count_http_error(401);
        send_error(res, 401,
                   error_body_for(req.path, 401,
                                  "Missing or invalid API key: send 'Authorization: Bearer KEY' or 'x-api-key: KEY'",
                                  "authentication_error", "", "invalid_api_key"));
        return httplib::Server::HandlerResponse::Handled;
      }
      if (!ctx.ready.load()) {
        send_error(res, 503, error_body_for(req.path, 503, "The model is still loading", "service_unavailable"));
        res.set_header("Retry-After", "1");
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
    // Statuses httplib sets itself (404 no route, 413 body too large, 400 bad framing) get
    // OpenAI bodies, or Anthropic ones on /v1/messages*.
    http.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req,
                                                                        httplib::Response& res) {
      if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
      std::string message = fmt::format("HTTP {}", res.status);
      if (res.status == 404) message = fmt::format("No route for {} {}", req.method, req.path);
      if (res.status == 400) message = "Malformed HTTP request (a POST without a body needs 'Content-Length: 0')";
      if (res.status == 413) {
        message = fmt::format("The request body is larger than the limit of {} bytes", ctx.options.max_body_bytes);
        ctx.metrics.count_http_error(413);
      }
      res.set_content(dump_json(error_body_for(req.path, res.status, message, reason_type(res.status))),
                      "application/json");
      return httplib::Server::HandlerResponse::Handled;
    }));

    http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
      if (!ctx.ready.load()) {
        send_error(res, 503, error_body("The model is still loading", "service_unavailable"));
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
    http.Get("/v1/cache", guarded([this](const httplib::Request&, httplib::Response& res) {
      send_json(res, cache_view_json(ctx.engine->stats()));
    }));
    http.Get("/metrics", guarded([this](const httplib::Request&, httplib::Response& res) {
      res.set_content(ctx.metrics.render(ctx.engine->stats(), ctx.options.served_model_name),
                      "text/plain; version=0.0.4");
    }));
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
    const int port = impl_->http.bind_to_any_port(o.host);
    check(port > 0, "cannot listen on {} (any port)", o.host);
    return port;
  }
  check(impl_->http.bind_to_port(o.host, o.port), "cannot listen on {}:{} (address in use or not available)", o.host,
        o.port);
  return o.port;
}

void ApiServer::listen() { impl_->http.listen_after_bind(); }

void ApiServer::stop() {
  if (impl_->http.is_running()) impl_->http.stop();
}

void ApiServer::set_ready(runtime::LoadedModel* model, engine::Engine* engine) {
  impl_->ctx.model = model;
  impl_->ctx.engine = engine;
  impl_->ctx.ready.store(true);
}

}  // namespace llmesh::api
