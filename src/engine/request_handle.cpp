#include "engine/request_handle.h"

#include <chrono>

namespace llmesh::engine {

void RequestHandle::push(TokenEvent event) {
  {
    std::lock_guard lock(mu_);
    if (event.finish_reason != FinishReason::None || !event.error.empty()) finished_ = true;
    events_.push_back(std::move(event));
  }
  cv_.notify_all();
}

bool RequestHandle::next(TokenEvent* event) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !events_.empty() || finished_; });
  if (events_.empty()) return false;
  *event = std::move(events_.front());
  events_.pop_front();
  return true;
}

bool RequestHandle::next_for(TokenEvent* event, int64_t timeout_ms, bool* timed_out) {
  std::unique_lock lock(mu_);
  *timed_out = !cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                             [&] { return !events_.empty() || finished_; });
  if (*timed_out || events_.empty()) return false;
  *event = std::move(events_.front());
  events_.pop_front();
  return true;
}

}  // namespace llmesh::engine
