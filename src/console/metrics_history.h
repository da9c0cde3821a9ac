// The console's live charts, kept server-side: a thread takes one sample per
// interval (default 1 s) from the owner's sampler and keeps the last
// `num_samples` (default 900: 15 minutes), so a page opened later draws the
// last quarter hour at once. The sampler runs on this thread only, so it may
// keep state (the previous counters it takes rates against).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

namespace llmesh::console {

class MetricsHistory {
 public:
  // One sample's fields (docs/console.md); "t_ms" is added here.
  using Sampler = std::function<nlohmann::json()>;

  MetricsHistory(Sampler sampler, int64_t interval_ms = 1000, size_t num_samples = 900);
  ~MetricsHistory();  // stop()s
  MetricsHistory(const MetricsHistory&) = delete;
  MetricsHistory& operator=(const MetricsHistory&) = delete;

  // Ends sampling (before what the sampler reads goes away); the samples stay readable.
  void stop();
  // {"interval_s", "window_s", "now_ms", "samples": [oldest first, t_ms > since_ms]}.
  nlohmann::json since(int64_t since_ms) const;

 private:
  void run();

  Sampler sampler_;
  int64_t interval_ms_;
  size_t num_samples_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<nlohmann::json> samples_;
  bool stop_ = false;
  std::mutex join_mu_;  // stop() may be called from two threads
  std::thread thread_;
};

// Now as Unix milliseconds.
int64_t unix_ms_now();

}  // namespace llmesh::console
