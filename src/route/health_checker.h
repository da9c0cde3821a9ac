// Active health checks: a thread that sends GET /health to every upstream
// whose check is due (Router::due_for_check) and reports the answer (200 ->
// healthy; anything else, or no answer within timeout_ms -> failure, which
// sets the backoff). Checks of different upstreams run one after another; a
// dead upstream costs at most timeout_ms per round.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "route/router.h"

namespace llmesh::route {

// One GET /health; "" when it answered 200, else what went wrong.
std::string check_upstream_health(const UpstreamSpec& spec, int64_t timeout_ms);
// The context length GET /v1/models reports (max_model_len, context_length or
// llama-server's meta.n_ctx of the first model); 0 when it says none.
int64_t fetch_context_tokens(const UpstreamSpec& spec, int64_t timeout_ms);

class HealthChecker {
 public:
  explicit HealthChecker(Router& router);
  ~HealthChecker();  // stops and joins

  // Checks every upstream now, in parallel, and returns when all answered (startup).
  void check_all_now();
  void start();
  void stop();

 private:
  void loop();
  void check(int upstream);

  Router& router_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
};

}  // namespace llmesh::route
