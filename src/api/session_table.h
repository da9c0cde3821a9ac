// What the server has seen of each agent session (api/session_key.h names
// them): requests, the last prompt and how much of it came from the cache,
// reuse against the session's previous prompt. Bounded: the least recently
// seen session is forgotten past `max_sessions`. GET /v1/sessions shows it;
// ids are the key's hash, never the key (a Claude Code user_id names the
// account).
#pragma once

#include <chrono>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "api/session_key.h"

namespace llmesh::api {

class SessionTable {
 public:
  explicit SessionTable(size_t max_sessions = 1024) : max_sessions_(max_sessions) {}

  // One finished request of `session` (ignored when it has no key).
  void record(const SessionKey& session, int64_t num_prompt_tokens, int64_t num_cached_tokens,
              int64_t num_output_tokens, bool succeeded);
  // {"num_sessions", "max_sessions", "sessions": [most recently seen first]}.
  nlohmann::json view() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    SessionKeySource source = SessionKeySource::none;
    Clock::time_point first_seen, last_seen;
    int64_t num_requests = 0, num_failed = 0;
    int64_t last_prompt_tokens = 0, last_cached_tokens = 0, previous_prompt_tokens = 0;
    int64_t total_prompt_tokens = 0, total_cached_tokens = 0, total_output_tokens = 0;
    std::list<uint64_t>::iterator recency;
  };
  mutable std::mutex mu_;
  size_t max_sessions_;
  std::unordered_map<uint64_t, Entry> entries_;  // by key hash
  std::list<uint64_t> recency_;                  // most recent first
};

}  // namespace llmesh::api
