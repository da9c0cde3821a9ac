// One HTTP request forwarded to one upstream. A pump thread runs the request
// through cpp-httplib's client and queues the body as it arrives; the server
// thread waits for the first bytes (deciding, before anything reached the
// client, whether to retry elsewhere), then drains the queue chunk by chunk
// into the client's response.
//
//   auto ex = UpstreamExchange::start(pool, std::move(request));
//   ex->wait_first_bytes(deadline);        // head + first body bytes, the end, or a failure
//   while (ex->take(buffer, 1s) == Progress::bytes) forward(buffer);
//   ex->cancel();                          // the client left: the upstream connection closes
//
// Guarantees:
//   * The body is never held whole: take() hands over what arrived since the
//     last call.
//   * cancel() makes the pump stop within one socket operation: it shuts the
//     upstream socket down (the upstream server sees its client leave and
//     cancels the generation) and the connection is not reused.
//   * The pump thread touches only the exchange and the pool (both shared), so
//     it may outlive the request that started it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include <httplib.h>

#include "route/connection_pool.h"

namespace llmesh::route {

// What went wrong, in words ("could not connect (refused or unreachable)").
std::string describe_http_error(httplib::Error error);

class UpstreamExchange : public std::enable_shared_from_this<UpstreamExchange> {
 public:
  enum class Progress {
    bytes,     // body bytes are ready (or, from wait_first_bytes, the head and first bytes came)
    finished,  // the response ended normally; everything has been taken
    failed,    // connection or read error (error_text() says which); see head_received()
    waiting,   // nothing new within the wait
  };

  static std::shared_ptr<UpstreamExchange> start(std::shared_ptr<ConnectionPool> pool, httplib::Request request);
  ~UpstreamExchange();

  // Blocks until the response head and the first body bytes arrived, the
  // response ended, it failed, or `deadline` passed with the head in (waiting).
  Progress wait_first_bytes(std::chrono::steady_clock::time_point deadline);
  // Appends the bytes that arrived since the last call to `out`; waits up to
  // max_wait when there are none. finished/failed once the end is taken.
  Progress take(std::string& out, std::chrono::milliseconds max_wait);
  void cancel();

  // Valid once head_received().
  bool head_received() const;
  int status() const { return status_; }
  const httplib::Headers& headers() const { return headers_; }
  bool connection_reused() const { return reused_; }
  int64_t num_body_bytes() const;
  std::string error_text() const;

 private:
  UpstreamExchange() = default;
  void run(std::unique_ptr<httplib::Client> client, httplib::Request request);

  std::shared_ptr<ConnectionPool> pool_;
  bool reused_ = false;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  // Written by the pump under mu_:
  bool head_ = false;
  int status_ = 0;                // set with head_
  httplib::Headers headers_;      // set with head_; not changed after
  std::string pending_;           // received, not yet taken
  int64_t num_body_bytes_ = 0;
  bool ended_ = false;            // send() returned
  bool failed_ = false;           // ... with an error
  std::string error_;
  // Written by the consumer:
  bool cancelled_ = false;
  httplib::Client* client_ = nullptr;  // live while the pump runs; for cancel()
};

}  // namespace llmesh::route
