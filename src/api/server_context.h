// What every endpoint handler shares: options, the model and engine (null
// until loading finishes), and the metrics.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "api/metrics.h"
#include "api/server_options.h"
#include "api/session_key.h"
#include "api/session_table.h"
#include "console/request_ring.h"
#include "engine/engine.h"
#include "runtime/loaded_model.h"
#include "runtime/model_library.h"

namespace llmesh::api {

struct ServerContext {
  ServerOptions options;
  runtime::LoadedModel* model = nullptr;  // set with engine by ApiServer::set_ready
  engine::Engine* engine = nullptr;
  std::atomic<bool> ready{false};
  // Graceful shutdown (ApiServer::drain): new requests get 503 while draining;
  // past the drain timeout, running generations are cancelled.
  std::atomic<bool> draining{false};
  std::atomic<bool> cancel_generations{false};
  // The engine can no longer run (a multi-rank job lost a rank): /health and
  // new requests get 503 with `failure` (written once, before `failed`).
  std::atomic<bool> failed{false};
  std::string failure;
  ServerMetrics metrics;
  SessionTable sessions;  // GET /v1/sessions
  // The console (console_views.h): finished requests, the model library, and what the node view shows.
  console::RequestRing requests;
  std::unique_ptr<runtime::ModelLibrary> library;  // null without --models-dir
  double started_at = 0;                           // Unix seconds
  int port = 0;                                    // the bound port
  int num_compute_threads = 0;

  // The context limit requests are checked against.
  int64_t context_tokens() const;
  // ApiError 404 when `requested` names another model ("" is accepted).
  void check_model_name(const std::string& requested) const;
};

using Clock = std::chrono::steady_clock;

// A submitted engine request and what the API edge remembers about it
// (see start_generation in generation_pipeline.h).
struct ActiveGeneration {
  std::shared_ptr<engine::RequestHandle> handle;
  std::string request_id;
  int64_t num_prompt_tokens = 0;
  Clock::time_point arrival;
  SessionKey session;
  std::string protocol;  // for the console's request ring
  bool stream = false;
};

// A new id with the given prefix ("chatcmpl-", "cmpl-") and 24 random hex digits.
std::string make_request_id(const std::string& prefix);

}  // namespace llmesh::api
