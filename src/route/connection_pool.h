// Kept-alive HTTP connections to one upstream, so a small request through the
// router costs no TCP handshake. A connection is handed to one exchange at a
// time and comes back only after a complete, uncancelled response; anything
// else (an error, a cancelled stream) closes it.
//
// Guarantees: at most max_idle idle connections; an idle one older than
// max_idle_s is closed instead of reused (servers close idle keep-alive
// connections after a few seconds: llmesh serve after 5). A reused connection
// can still turn out closed; Lease::reused tells the caller to retry on a
// fresh one before blaming the upstream.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace httplib {
class Client;
}

namespace llmesh::route {

struct ConnectionOptions {
  double connect_timeout_s = 3;
  double read_timeout_s = 600;
  double write_timeout_s = 60;
  double max_idle_s = 2;
  size_t max_idle = 64;
};

class ConnectionPool {
 public:
  ConnectionPool(std::string host, int port, ConnectionOptions options);
  ~ConnectionPool();

  struct Lease {
    std::unique_ptr<httplib::Client> client;
    bool reused = false;
  };
  Lease acquire();
  // After a complete response: the connection may serve the next request.
  void release(std::unique_ptr<httplib::Client> client);
  size_t num_idle() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Idle {
    std::unique_ptr<httplib::Client> client;
    Clock::time_point since;
  };
  std::string host_;
  int port_;
  ConnectionOptions options_;
  mutable std::mutex mu_;
  std::vector<Idle> idle_;  // most recently released last
};

}  // namespace llmesh::route
