#include "bench/run_context.h"

#include <unistd.h>

#include <cstdio>
#include <thread>

#include "core/error.h"

namespace llmesh::bench {

using nlohmann::json;

ProgressLine::ProgressLine() : enabled_(isatty(STDERR_FILENO) != 0) {}

void ProgressLine::set_point(std::string label) {
  std::lock_guard<std::mutex> lock(mutex_);
  point_ = std::move(label);
  phase_.clear();
  num_total_ = num_done_ = num_failed_ = 0;
  draw(true);
}

void ProgressLine::set_phase(std::string phase, int64_t num_total) {
  std::lock_guard<std::mutex> lock(mutex_);
  phase_ = std::move(phase);
  num_total_ = num_total;
  num_done_ = num_failed_ = 0;
  draw(true);
}

void ProgressLine::request_done(bool ok) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++num_done_;
  if (!ok) ++num_failed_;
  draw(false);
}

void ProgressLine::clear() {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

void ProgressLine::draw(bool force) {
  if (!enabled_) return;
  const double now_s = std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
  if (!force && now_s - last_draw_s_ < 0.2) return;
  last_draw_s_ = now_s;
  std::fprintf(stderr, "\r\033[K%s  %s %lld/%lld%s", point_.c_str(), phase_.c_str(), static_cast<long long>(num_done_),
               static_cast<long long>(num_total_),
               num_failed_ > 0 ? fmt::format("  FAILED {}", num_failed_).c_str() : "");
  std::fflush(stderr);
}

std::shared_ptr<ServerClient> RunContext::make_client() {
  auto client = std::make_shared<ServerClient>(client_options);
  std::lock_guard<std::mutex> lock(clients_mutex_);
  std::erase_if(clients_, [](const std::weak_ptr<ServerClient>& w) { return w.expired(); });
  clients_.push_back(client);
  return client;
}

void RunContext::abort_all_clients() {
  std::lock_guard<std::mutex> lock(clients_mutex_);
  for (auto& weak : clients_)
    if (auto c = weak.lock()) c->abort();
}

uint64_t RunContext::seed(const PointSpec& spec, const std::string& role, int64_t index) const {
  // FNV-1a over the identity, then mixed with the index and the run's nonce.
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : spec.key() + "|" + role) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  h ^= static_cast<uint64_t>(index) * 0x9E3779B97F4A7C15ull;
  h ^= run_nonce + (h << 6) + (h >> 2);
  return h;
}

json RunContext::exact_user_messages(int64_t prompt_tokens, uint64_t seed) const {
  const int64_t content_tokens = std::max<int64_t>(1, prompt_tokens - chat_overhead_tokens);
  return json::array({{{"role", "user"}, {"content", prompts->text_of_tokens(content_tokens, seed)}}});
}

bool RunContext::flush_cache() {
  if (flush_endpoint.empty()) return false;
  ClientOptions patient = client_options;
  patient.timeout_s = std::max(patient.timeout_s, 120.0);
  ServerClient client(patient);
  return !client.flush_prefix_cache().empty();
}

std::vector<RequestRecord> RunContext::run_requests(
    const PointSpec& spec, const std::string& role, int64_t num_requests, int64_t concurrency,
    const std::function<GenerationRequest(int64_t, RequestRecord&)>& make) {
  std::vector<RequestRecord> records(static_cast<size_t>(num_requests));
  if (progress != nullptr) progress->set_phase(role, num_requests);
  std::atomic<int64_t> next{0};
  auto worker = [&] {
    std::shared_ptr<ServerClient> client = make_client();
    for (int64_t i; !stopping() && (i = next.fetch_add(1)) < num_requests;) {
      RequestRecord& r = records[static_cast<size_t>(i)];
      r.point_key = spec.key();
      r.role = role;
      r.index = i;
      GenerationRequest request;
      try {
        request = make(i, r);
      } catch (const Error& e) {
        r.ok = false;
        r.error = std::string("building the prompt: ") + e.what();
        store->append(r);
        continue;
      }
      client->generate(request, r, run_start, stop);
      store->append(r);
      if (progress != nullptr) progress->request_done(r.ok);
    }
  };
  std::vector<std::thread> threads;
  const int64_t num_threads = std::max<int64_t>(1, std::min(concurrency, num_requests));
  for (int64_t t = 0; t < num_threads; ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  // Requests never sent because of Ctrl-C are not records.
  std::erase_if(records, [](const RequestRecord& r) { return r.point_key.empty(); });
  return records;
}

void run_point(RunContext& ctx, const PointSpec& spec) {
  if (spec.kind == "fixed") return run_fixed_point(ctx, spec);
  if (spec.kind == "interference") return run_interference(ctx, spec);
  if (spec.kind == "prefix_ab") return run_prefix_ab(ctx, spec);
  if (spec.kind == "needle") return run_needle(ctx, spec);
  if (spec.kind == "sessions") return run_sessions(ctx, spec);
  if (spec.kind == "trace") return run_trace(ctx, spec);
  if (spec.kind == "soak") return run_soak(ctx, spec);
  fail("unknown point kind '{}'", spec.kind);
}

}  // namespace llmesh::bench
