// What every route handler shares: the router state, the request log and the
// settings. Owned by RouteServer; outlives every request it serves.
#pragma once

#include <functional>
#include <memory>

#include <httplib.h>

#include "console/request_ring.h"
#include "route/request_log.h"
#include "route/router.h"

namespace llmesh::route {

struct RouteContext {
  Router& router;
  RequestLog* request_log = nullptr;  // null: no --log-requests
  // POST /v1/messages/count_tokens answered here (--model FILE); empty: an llmesh upstream answers it.
  std::function<void(const httplib::Request&, httplib::Response&)> count_tokens_locally;
  console::RequestRing requests;  // the console's Requests view
  const RouteConfig& config() const { return router.config(); }
};

}  // namespace llmesh::route
