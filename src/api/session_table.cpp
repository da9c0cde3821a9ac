#include "api/session_table.h"

#include <fmt/format.h>

#include <algorithm>

namespace llmesh::api {

void SessionTable::record(const SessionKey& session, int64_t num_prompt_tokens, int64_t num_cached_tokens,
                          int64_t num_output_tokens, bool succeeded) {
  if (session.source == SessionKeySource::none) return;
  const auto now = Clock::now();
  std::lock_guard lock(mu_);
  auto [it, inserted] = entries_.try_emplace(session.hash);
  Entry& e = it->second;
  if (inserted) {
    e.source = session.source;
    e.first_seen = now;
    recency_.push_front(session.hash);
  } else {
    recency_.splice(recency_.begin(), recency_, e.recency);
  }
  e.recency = recency_.begin();
  e.last_seen = now;
  ++e.num_requests;
  if (!succeeded) ++e.num_failed;
  e.previous_prompt_tokens = e.last_prompt_tokens;
  e.last_prompt_tokens = num_prompt_tokens;
  e.last_cached_tokens = num_cached_tokens;
  e.total_prompt_tokens += num_prompt_tokens;
  e.total_cached_tokens += num_cached_tokens;
  e.total_output_tokens += num_output_tokens;
  while (entries_.size() > max_sessions_) {
    entries_.erase(recency_.back());
    recency_.pop_back();
  }
}

nlohmann::json SessionTable::view() const {
  const auto now = Clock::now();
  auto seconds_ago = [&](Clock::time_point t) { return std::chrono::duration<double>(now - t).count(); };
  std::lock_guard lock(mu_);
  nlohmann::json sessions = nlohmann::json::array();
  for (uint64_t hash : recency_) {
    const Entry& e = entries_.at(hash);
    // Reuse of the last turn: its cached tokens against the session's previous prompt.
    nlohmann::json reuse;
    if (e.previous_prompt_tokens > 0) {
      reuse = double(std::min(e.last_cached_tokens, e.previous_prompt_tokens)) / double(e.previous_prompt_tokens);
    }
    sessions.push_back({{"id", fmt::format("{:016x}", hash)},
                        {"source", session_key_source_name(e.source)},
                        {"num_requests", e.num_requests},
                        {"num_failed", e.num_failed},
                        {"first_seen_seconds_ago", seconds_ago(e.first_seen)},
                        {"last_seen_seconds_ago", seconds_ago(e.last_seen)},
                        {"last_prompt_tokens", e.last_prompt_tokens},
                        {"last_cached_tokens", e.last_cached_tokens},
                        {"last_turn_reuse", reuse},
                        {"total_prompt_tokens", e.total_prompt_tokens},
                        {"total_cached_tokens", e.total_cached_tokens},
                        {"total_output_tokens", e.total_output_tokens}});
  }
  return {{"num_sessions", int64_t(entries_.size())}, {"max_sessions", int64_t(max_sessions_)},
          {"sessions", sessions}};
}

}  // namespace llmesh::api
