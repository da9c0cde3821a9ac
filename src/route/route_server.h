// The router's HTTP front: the same endpoints as `llmesh serve`, answered by
// forwarding (proxy.h), plus the router's own views.
//
//   POST /v1/chat/completions, /v1/completions, /v1/messages,
//        /v1/messages/count_tokens, /v1/responses   -> an upstream the policy picks
//   GET  /v1/models   the union of the healthy upstreams' models
//   GET  /health      200 while at least one upstream is healthy, else 503
//   GET  /metrics     the router's Prometheus metrics (route_views.h)
//   GET  /v1/route    the router's state as JSON (for the console)
// With an API key every endpoint but /health wants 'Authorization: Bearer KEY'
// or 'x-api-key: KEY'. Errors take Anthropic's shape on /v1/messages*, OpenAI's elsewhere.
//
//   RouteServer server(router, log);
//   int port = server.bind();   // Error when the address is taken
//   server.listen();            // until stop()
#pragma once

#include <functional>
#include <memory>

#include <httplib.h>

#include "route/request_log.h"
#include "route/router.h"

namespace llmesh::route {

class RouteServer {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
  // count_tokens_locally: answers /v1/messages/count_tokens in the router (--model); empty: an upstream does.
  RouteServer(Router& router, RequestLog* request_log, Handler count_tokens_locally = {});
  ~RouteServer();

  int bind();
  void listen();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmesh::route
