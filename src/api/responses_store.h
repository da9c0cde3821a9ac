// A bounded in-memory store of finished responses, so that a request may
// continue one with `previous_response_id` instead of resending the history.
// Each entry holds the whole conversation as Responses input items (the
// previous history, this request's input, this response's output), never the
// instructions (the API does not carry them over). Least recently used
// entries are evicted beyond kMaxEntries or kMaxBytes; a request naming an
// evicted or unknown id gets a 400. Nothing survives a restart. Codex does not
// use this (it sends store: false and the full history).
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

namespace llmesh::api {

class ResponseStore {
 public:
  static constexpr size_t kMaxEntries = 1024;
  static constexpr size_t kMaxBytes = size_t(64) << 20;  // of serialized JSON

  ResponseStore(size_t max_entries = kMaxEntries, size_t max_bytes = kMaxBytes);

  // Stores (or replaces) the conversation items of `response_id`; an entry larger than max_bytes is not kept.
  void put(const std::string& response_id, nlohmann::json conversation_items);
  // The items, or nullopt when unknown or evicted. Marks the entry recently used.
  std::optional<nlohmann::json> get(const std::string& response_id);

  size_t num_entries() const;
  size_t num_bytes() const;

 private:
  struct Entry {
    nlohmann::json items;
    size_t num_bytes = 0;
    std::list<std::string>::iterator lru_position;
  };
  void evict_until_within_limits();  // precondition: mutex_ held

  const size_t max_entries_;
  const size_t max_bytes_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
  std::list<std::string> lru_;  // most recently used first
  size_t num_bytes_ = 0;
};

// The store /v1/responses uses (one per process).
ResponseStore& response_store();

}  // namespace llmesh::api
