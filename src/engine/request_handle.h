// A request's output channel, shared by the engine loop (producer) and the
// thread that submitted it (consumer: an HTTP handler, `llmesh run`).
//
//   auto handle = engine.submit(request);
//   TokenEvent ev;
//   while (handle->next(&ev)) { ... if (ev.finish_reason != FinishReason::None) break; }
//   handle->cancel();   // e.g. the client disconnected: the engine drops it at its next step
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>

#include "engine/request.h"
#include "engine/request_timeline.h"

namespace llmesh::engine {

class RequestHandle {
 public:
  explicit RequestHandle(std::string request_id) : request_id_(std::move(request_id)) {}

  // Blocks until an event is available; false once the request has finished
  // and every event has been read.
  bool next(TokenEvent* event);
  // Same, but gives up after `timeout_ms` (returns false with *timed_out = true).
  bool next_for(TokenEvent* event, int64_t timeout_ms, bool* timed_out);
  // Asks the engine to stop this request at its next step.
  void cancel() { cancelled_.store(true); }
  bool cancelled() const { return cancelled_.load(); }
  const std::string& request_id() const { return request_id_; }
  // Admission and prefill chunks (engine thread writes; read it once the request ended).
  RequestTimeline& timeline() { return timeline_; }
  const RequestTimeline& timeline() const { return timeline_; }

  // Engine side: an event with a finish reason or an error is the last one.
  void push(TokenEvent event);

 private:
  std::string request_id_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<TokenEvent> events_;
  bool finished_ = false;
  std::atomic<bool> cancelled_{false};
  RequestTimeline timeline_;
};

}  // namespace llmesh::engine
