// The last N requests a server or router finished, for the console's
// Requests view and its TTFT percentiles: counts and times only, never
// prompts or output. Bounded: the oldest record is dropped past `capacity`.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace llmesh::console {

// Now as Unix seconds (the console's clock: browsers show wall time).
double unix_seconds_now();

struct RequestRecord {
  std::string id;
  std::string protocol;  // chat | completions | messages | responses
  std::string model;
  std::string session;   // the session key's hash in hex; "" when none
  std::string upstream;  // route only: the upstream that served it
  bool stream = false;
  double arrived_at = 0, finished_at = 0;  // Unix seconds
  int status = 200;                        // HTTP status
  std::string outcome = "ok";              // ok | error | cancelled
  std::string error;
  int64_t num_prompt_tokens = 0, num_cached_tokens = 0, num_output_tokens = 0;
  std::optional<double> ttft_s, tpot_s;
  std::string finish_reason;  // stop | length | loop_guard | cancelled | error
  nlohmann::json timeline = nlohmann::json::array();  // [{phase, start_s, end_s, ...}] (docs/console.md)
};

struct TtftQuantiles {
  std::optional<double> p50, p95;
};

class RequestRing {
 public:
  explicit RequestRing(size_t capacity = 256) : capacity_(capacity) {}

  void add(RequestRecord record);
  // {"capacity", "num_recorded", "requests": [most recent first, at most `limit`, no timelines]}.
  nlohmann::json list(size_t limit) const;
  // One record with its timeline; nullopt when it is no longer (or never was) in the ring.
  std::optional<nlohmann::json> find(const std::string& id) const;
  // TTFT of the requests that finished after `since` (Unix seconds) and produced a token.
  TtftQuantiles ttft_since(double since) const;
  size_t capacity() const { return capacity_; }
  void set_capacity(size_t capacity);

 private:
  mutable std::mutex mu_;
  size_t capacity_;
  std::deque<RequestRecord> records_;  // oldest first
  int64_t num_recorded_ = 0;
};

nlohmann::json record_json(const RequestRecord& r, bool with_timeline);

// The history samples' TTFT fields, {"ttft_p50_s", "ttft_p95_s"}: the requests that
// finished in the minute before `now` (null when none did).
nlohmann::json recent_ttft_fields(const RequestRing& ring, double now);

}  // namespace llmesh::console
