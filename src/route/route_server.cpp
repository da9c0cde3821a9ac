#include "route/route_server.h"

#include <httplib.h>

#include <map>

#include "api/anthropic_error.h"
#include "api/api_error.h"
#include "api/http_listener.h"
#include "api/sse.h"
#include "console/console_routes.h"
#include "console/metrics_history.h"
#include "core/error.h"
#include "core/log.h"
#include "route/proxy.h"
#include "route/route_context.h"
#include "route/route_console.h"
#include "route/route_views.h"
#include "route/upstream_fetch.h"

namespace llmesh::route {

using nlohmann::json;

namespace {

json error_body_for(const std::string& path, int status, const std::string& message, const char* openai_type) {
  if (api::is_anthropic_path(path)) return api::anthropic_error_body(status, message);
  return api::error_body(message, openai_type);
}

void send_json(httplib::Response& res, const json& body, int status = 200) {
  res.status = status;
  res.set_content(api::dump_json(body), "application/json");
}

bool authorized(const std::string& api_key, const httplib::Request& req) {
  if (api_key.empty()) return true;
  if (req.get_header_value("Authorization") == "Bearer " + api_key) return true;
  return req.get_header_value("x-api-key") == api_key;
}

// GET /v1/models of every healthy upstream, in parallel; models merged by id
// (the first upstream's entry wins), each listing the upstreams that serve it.
json models_union(Router& router, const httplib::Request& req) {
  const int n = router.num_upstreams();
  const std::vector<json> answers = fetch_from_upstreams(router, "/v1/models", nullptr, &req);
  json data = json::array();
  std::map<std::string, size_t> index;
  int num_answered = 0;
  for (int i = 0; i < n; ++i) {
    const json& a = answers[size_t(i)];
    if (!a.is_object() || !a.contains("data") || !a["data"].is_array()) continue;
    ++num_answered;
    for (const json& m : a["data"]) {
      if (!m.is_object() || !m.contains("id") || !m["id"].is_string()) continue;
      const std::string id = m["id"].get<std::string>();
      auto [it, inserted] = index.emplace(id, data.size());
      if (inserted) {
        data.push_back(m);
        data.back()["upstreams"] = json::array();
      }
      data[it->second]["upstreams"].push_back(router.upstream(i).name);
    }
  }
  if (num_answered == 0) throw api::ApiError(503, "service_unavailable", "no healthy upstream answered GET /v1/models");
  return {{"object", "list"}, {"data", data}};
}

}  // namespace

struct RouteServer::Impl {
  Router& router;
  RouteContext ctx;
  api::HttpListener http;  // serve's connection handling: bounded workers, overflow 503, read deadlines
  double started_at = console::unix_seconds_now();
  int port = 0;
  console::MetricsHistory history;  // the console's charts

  static api::ListenerOptions listener_options(const RouteConfig& config) {
    api::ListenerOptions o;
    o.num_workers = config.num_http_threads;
    return o;
  }

  Impl(Router& r, RequestLog* log, Handler count_tokens)
      : router(r),
        ctx{r, log, std::move(count_tokens)},
        http(listener_options(r.config())),
        history(RouteHistorySampler(r, ctx.requests)) {
    setup();
  }

  template <typename Fn>
  httplib::Server::Handler guarded(Fn fn) {
    return [fn](const httplib::Request& req, httplib::Response& res) {
      try {
        fn(req, res);
      } catch (const api::ApiError& e) {
        send_json(res,
                  api::is_anthropic_path(req.path) ? api::anthropic_error_body(e.http_status(), e.what()) : e.to_json(),
                  e.http_status());
      } catch (const std::exception& e) {
        log_error("llmesh route: {} {}: {}", req.method, req.path, e.what());
        send_json(res, error_body_for(req.path, 500, std::string("internal error: ") + e.what(), "server_error"), 500);
      }
    };
  }

  void setup() {
    http.set_payload_max_length(size_t(64) << 20);

    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (api::HttpListener::overloaded()) {
        send_json(res, error_body_for(req.path, 503, "The router is busy: every connection is in use; retry shortly",
                                      "service_unavailable"),
                  503);
        res.set_header("Retry-After", "1");
        return httplib::Server::HandlerResponse::Handled;
      }
      if (req.path == "/health" || console::is_public_console_path(req.path) ||
          authorized(router.config().api_key, req))
        return httplib::Server::HandlerResponse::Unhandled;
      send_json(res,
                error_body_for(req.path, 401,
                               "Missing or invalid API key: send 'Authorization: Bearer KEY' or 'x-api-key: KEY'",
                               "authentication_error"),
                401);
      return httplib::Server::HandlerResponse::Handled;
    });
    http.set_error_handler(
        httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
          if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
          std::string message = fmt::format("HTTP {}", res.status);
          if (res.status == 404) message = fmt::format("No route for {} {}", req.method, req.path);
          if (res.status == 413) message = "The request body is larger than the router's limit of 64 MiB";
          res.set_content(api::dump_json(error_body_for(req.path, res.status, message,
                                                        res.status == 404 ? "not_found_error" : "invalid_request_error")),
                          "application/json");
          return httplib::Server::HandlerResponse::Handled;
        }));

    http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
      int num_healthy = 0;
      for (int i = 0; i < router.num_upstreams(); ++i) num_healthy += router.healthy(i) ? 1 : 0;
      if (num_healthy == 0) {
        send_json(res, api::error_body("no upstream is healthy", "service_unavailable"), 503);
        return;
      }
      send_json(res, {{"status", "ok"}, {"upstreams_healthy", num_healthy}, {"upstreams", router.num_upstreams()}});
    });
    console::ConsoleViews views = route_console_views({router, ctx.requests, started_at, port});
    views.history = [this](int64_t since_ms) { return history.since(since_ms); };
    console::add_console_routes(http, std::move(views),
                                [this](httplib::Server::Handler handler) { return guarded(std::move(handler)); });
    http.Get("/metrics", guarded([this](const httplib::Request&, httplib::Response& res) {
      res.set_content(render_route_metrics(router.snapshot()), "text/plain; version=0.0.4");
    }));
    http.Get("/v1/route", guarded([this](const httplib::Request&, httplib::Response& res) {
      send_json(res, route_state_json(router.snapshot()));
    }));
    http.Get("/v1/models", guarded([this](const httplib::Request& req, httplib::Response& res) {
      send_json(res, models_union(router, req));
    }));
    for (const char* path :
         {"/v1/chat/completions", "/v1/completions", "/v1/messages", "/v1/messages/count_tokens", "/v1/responses"}) {
      http.Post(path, guarded([this](const httplib::Request& req, httplib::Response& res) {
        forward_request(ctx, req, res);
      }));
    }
  }
};

RouteServer::RouteServer(Router& router, RequestLog* request_log, Handler count_tokens_locally)
    : impl_(std::make_unique<Impl>(router, request_log, std::move(count_tokens_locally))) {}

RouteServer::~RouteServer() { stop(); }

int RouteServer::bind() {
  const RouteConfig& c = impl_->router.config();
  if (c.port == 0) {
    const int port = impl_->http.bind_any(c.host);
    check(port > 0, "cannot listen on {} (any port)", c.host);
    impl_->port = port;
    return port;
  }
  check(impl_->http.bind(c.host, c.port), "cannot listen on {}:{} (address in use or not available)", c.host,
        c.port);
  impl_->port = c.port;
  return c.port;
}

void RouteServer::listen() { impl_->http.listen_after_bind(); }

void RouteServer::stop() {
  impl_->http.shut_down();
}

}  // namespace llmesh::route
