// What every mode's runner shares: the client settings, the prompt builder,
// what was learned about the server, the results store, the stop flag
// (Ctrl-C) and the progress line.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "bench/point_spec.h"
#include "bench/prompt_builder.h"
#include "bench/request_record.h"
#include "bench/results_store.h"
#include "bench/server_client.h"

namespace llmesh::bench {

// A one-line status on stderr, redrawn in place; silent unless stderr is a terminal.
class ProgressLine {
 public:
  ProgressLine();
  void set_point(std::string label);  // "[3/12] 1K->1 C16"
  void request_done(bool ok);
  void set_phase(std::string phase, int64_t num_total);  // resets the counters
  void clear();

 private:
  void draw(bool force);
  bool enabled_;
  std::mutex mutex_;
  std::string point_, phase_;
  int64_t num_total_ = 0, num_done_ = 0, num_failed_ = 0;
  double last_draw_s_ = -1;
};

struct RunContext {
  ClientOptions client_options;
  std::shared_ptr<const PromptBuilder> prompts;
  int64_t chat_overhead_tokens = 0;  // prompt tokens the chat template adds around one user message
  int64_t context_limit = -1;        // the server's, from /v1/models; -1 unknown
  std::string flush_endpoint;        // "" when the server has none (unique prompts only)
  ResultsStore* store = nullptr;
  Clock::time_point run_start;
  uint64_t run_nonce = 0;  // mixed into prompt seeds so a resumed run never repeats an old prompt
  std::atomic<bool>* stop = nullptr;
  ProgressLine* progress = nullptr;

  bool stopping() const { return stop != nullptr && stop->load(); }

  // A client for one thread, registered so Ctrl-C can abort it.
  std::shared_ptr<ServerClient> make_client();
  void abort_all_clients();

  // A seed for prompt content, distinct per (point, role, index) and per run.
  uint64_t seed(const PointSpec& spec, const std::string& role, int64_t index) const;

  // One user message whose chat prompt has exactly `prompt_tokens` tokens
  // (the template's overhead subtracted; at least one content token).
  nlohmann::json exact_user_messages(int64_t prompt_tokens, uint64_t seed) const;

  // Flushes the server's prefix cache when it can; false when it cannot.
  bool flush_cache();

  // Runs `num_requests` requests with `concurrency` workers; request i is made
  // by `make(i, record)` (fill the record's tags, return the request). Every
  // finished record is appended to the store and returned (in index order).
  std::vector<RequestRecord> run_requests(
      const PointSpec& spec, const std::string& role, int64_t num_requests, int64_t concurrency,
      const std::function<GenerationRequest(int64_t index, RequestRecord& record)>& make);

 private:
  std::mutex clients_mutex_;
  std::vector<std::weak_ptr<ServerClient>> clients_;
};

// Each mode: runs one point, appending its records and marking it finished
// (unless stopped); returns normally on server failures (they are recorded).
void run_fixed_point(RunContext& ctx, const PointSpec& spec);
void run_interference(RunContext& ctx, const PointSpec& spec);
void run_prefix_ab(RunContext& ctx, const PointSpec& spec);
void run_needle(RunContext& ctx, const PointSpec& spec);
void run_sessions(RunContext& ctx, const PointSpec& spec);
void run_trace(RunContext& ctx, const PointSpec& spec);
void run_soak(RunContext& ctx, const PointSpec& spec);

// Dispatch by spec.kind.
void run_point(RunContext& ctx, const PointSpec& spec);

}  // namespace llmesh::bench
