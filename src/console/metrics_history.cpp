#include "console/metrics_history.h"

#include <chrono>

#include "core/log.h"

namespace llmesh::console {

using nlohmann::json;

int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

MetricsHistory::MetricsHistory(Sampler sampler, int64_t interval_ms, size_t num_samples)
    : sampler_(std::move(sampler)), interval_ms_(interval_ms), num_samples_(num_samples), thread_([this] { run(); }) {}

MetricsHistory::~MetricsHistory() { stop(); }

void MetricsHistory::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  std::lock_guard lock(join_mu_);
  if (thread_.joinable()) thread_.join();
}

void MetricsHistory::run() {
  auto next = std::chrono::steady_clock::now();
  std::unique_lock lock(mu_);
  while (!stop_) {
    next += std::chrono::milliseconds(interval_ms_);
    // Fell behind (a stopped process, a loaded machine): no burst of catch-up samples.
    if (const auto now = std::chrono::steady_clock::now(); next < now) next = now;
    if (cv_.wait_until(lock, next, [&] { return stop_; })) break;
    lock.unlock();
    json sample;
    try {
      sample = sampler_();
    } catch (const std::exception& e) {  // a sample is not worth the server
      log_warn("console: a metrics sample failed: {}", e.what());
    }
    lock.lock();
    if (sample.is_null()) continue;  // nothing to show yet (the model is loading)
    sample["t_ms"] = unix_ms_now();
    samples_.push_back(std::move(sample));
    while (samples_.size() > num_samples_) samples_.pop_front();
  }
}

json MetricsHistory::since(int64_t since_ms) const {
  json samples = json::array();
  {
    std::lock_guard lock(mu_);
    for (const json& s : samples_)
      if (s["t_ms"].get<int64_t>() > since_ms) samples.push_back(s);
  }
  return {{"interval_s", double(interval_ms_) / 1000.0},
          {"window_s", double(interval_ms_) * double(num_samples_) / 1000.0},
          {"now_ms", unix_ms_now()},
          {"samples", std::move(samples)}};
}

}  // namespace llmesh::console
