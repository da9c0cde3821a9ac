// The HTTP server's connection handling: a bounded set of worker threads,
// each owning one connection at a time (an open stream holds its worker for
// its whole life), an overflow path that answers what the workers cannot
// take, and TLS.
//
//   accepted connection
//     -> a worker is free:      served (keep-alive, HttpConnection's limits)
//     -> all workers are busy:  an overflow worker reads the request and the
//                               pre-routing handler answers 503 + Retry-After
//                               (overloaded() is true); the connection closes
//     -> overflow backlog full: closed at once (counted)
// So the worker count is the real limit, and what exceeds it is answered at
// once instead of waiting unseen in a queue. `llmesh serve` sizes the workers
// to every request the engine may hold (running + waiting) plus headroom for
// /health, /metrics and count_tokens: past that, the engine's own 429 answers first.
//
// Handlers run on the thread that owns the connection: current_connection()
// is that connection (its byte counts, its start, whether it is overflow).
#pragma once

#include <httplib.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "api/http_connection.h"

namespace llmesh::api {

struct ListenerOptions {
  int num_workers = 64;
  int num_overflow_workers = 2;
  int max_overflow_backlog = 64;     // overflow connections waiting for an overflow worker
  double keep_alive_seconds = 5;     // an idle connection holds its worker this long
  int64_t max_keep_alive_requests = 100000;
  ConnectionLimits limits;
  std::string tls_cert_file, tls_key_file;  // both set: HTTPS only
};

struct ListenerStats {
  int64_t num_workers = 0, num_busy_workers = 0;
  int64_t num_connections = 0;             // accepted so far
  int64_t num_overflow_connections = 0;    // answered 503 by the overflow path
  int64_t num_dropped_connections = 0;     // closed unanswered: the overflow backlog was full
  int64_t num_tls_handshake_failures = 0;
};

class HttpListener : public httplib::Server {
 public:
  // Throws Error when the TLS certificate or key cannot be loaded.
  explicit HttpListener(const ListenerOptions& options);
  ~HttpListener() override;

  bool is_tls() const { return ssl_ctx_ != nullptr; }
  // httplib's bind_to_port / bind_to_any_port, then a listen queue of SOMAXCONN
  // instead of the library's 5: a burst of connections (30 agents at once) must
  // wait to be accepted, not have its handshakes dropped or reset.
  // bind() returns whether it could listen; bind_any() the port, or -1.
  bool bind(const std::string& host, int port);
  int bind_any(const std::string& host);
  // The JSON body of the 408/414/431 sent when a limit ends a request before
  // the library could parse it (its path may be partial or empty).
  void set_read_failure_body(std::function<std::string(int status, const std::string& path)> body) {
    read_failure_body_ = std::move(body);
  }
  ListenerStats stats() const;
  // Stops listening and ends every kept-alive connection after its current
  // request. (httplib's stop() alone keeps serving a connection whose client
  // keeps sending, like a console tab polling each second, and its shutdown
  // then waits on that worker for ever.)
  void shut_down();

  // The connection this thread is serving (null outside a handler).
  static HttpConnection* current_connection();
  // This thread serves an overflow connection: answer 503 and close.
  static bool overloaded();

  struct Counters;  // shared with the worker pool

 private:
  bool process_and_close_socket(int sock) override;
  void answer_read_failure(HttpConnection& connection) const;

  ListenerOptions options_;
  std::atomic<bool> shutting_down_{false};
  SSL_CTX* ssl_ctx_ = nullptr;
  std::shared_ptr<Counters> counters_;
  std::function<std::string(int, const std::string&)> read_failure_body_;
};

}  // namespace llmesh::api
