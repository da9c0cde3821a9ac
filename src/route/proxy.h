// Forwards one generation request (chat/completions, completions, messages,
// count_tokens, responses) to the upstream the policy picks, and its answer
// back to the client.
//
// Guarantees:
//   * Streams pass through chunk by chunk as the upstream sends them; nothing
//     waits for the whole response (a non-streaming body that is complete
//     when its first bytes arrive is sent with Content-Length).
//   * A request is retried once, on another upstream, when its attempt failed
//     before any byte reached the client: the connection or read failed, or
//     the upstream answered 429 or 5xx. After the first byte went out there is
//     no retry: an upstream failure mid-stream ends the stream with an error
//     event in the API's shape (Anthropic `event: error`, OpenAI `data: {"error"}`).
//   * A failed connection marks the upstream down at once (its sessions move);
//     a stale kept-alive connection is retried on a fresh one first and is not
//     held against the upstream.
//   * A client that disconnects cancels the upstream request (its connection
//     is closed, so an llmesh upstream stops generating at its next step).
//   * Every request, finished or failed, is counted once (Router::finish) and
//     logged once (RequestLog).
// The answer carries `x-llmesh-upstream: NAME`, the upstream that served it.
#pragma once

#include <httplib.h>

#include "route/route_context.h"

namespace llmesh::route {

void forward_request(RouteContext& ctx, const httplib::Request& req, httplib::Response& res);

// Request headers that are not forwarded: hop-by-hop ones, those the client
// library sets itself, and httplib's REMOTE_ADDR-style pseudo headers.
bool is_unforwarded_request_header(const std::string& name);
// Response headers that are not passed back (framing and hop-by-hop).
bool is_unforwarded_response_header(const std::string& name);

}  // namespace llmesh::route
