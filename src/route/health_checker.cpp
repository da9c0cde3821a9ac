#include "route/health_checker.h"

#include <httplib.h>

#include <vector>

#include "route/upstream_exchange.h"

namespace llmesh::route {

std::string check_upstream_health(const UpstreamSpec& spec, int64_t timeout_ms) {
  httplib::Client client(spec.host, spec.port);
  const time_t sec = time_t(timeout_ms / 1000), usec = time_t((timeout_ms % 1000) * 1000);
  client.set_connection_timeout(sec, usec);
  client.set_read_timeout(sec, usec);
  client.set_write_timeout(sec, usec);
  client.set_keep_alive(false);
  httplib::Headers headers;
  if (!spec.api_key.empty()) headers.emplace("Authorization", "Bearer " + spec.api_key);
  httplib::Result res = client.Get("/health", headers);
  if (!res) return "GET /health: " + describe_http_error(res.error());
  if (res->status != 200) return "GET /health: HTTP " + std::to_string(res->status);
  return "";
}

int64_t fetch_context_tokens(const UpstreamSpec& spec, int64_t timeout_ms) {
  httplib::Client client(spec.host, spec.port);
  const time_t sec = time_t(timeout_ms / 1000), usec = time_t((timeout_ms % 1000) * 1000);
  client.set_connection_timeout(sec, usec);
  client.set_read_timeout(sec, usec);
  httplib::Headers headers;
  if (!spec.api_key.empty()) headers.emplace("Authorization", "Bearer " + spec.api_key);
  httplib::Result res = client.Get("/v1/models", headers);
  if (!res || res->status != 200) return 0;
  const nlohmann::json j = nlohmann::json::parse(res->body, nullptr, false);
  if (!j.is_object() || !j.contains("data") || !j["data"].is_array() || j["data"].empty()) return 0;
  const nlohmann::json& m = j["data"][0];
  for (const char* key : {"max_model_len", "context_length", "context_window"})
    if (m.contains(key) && m[key].is_number_integer()) return m[key].get<int64_t>();
  if (m.contains("meta") && m["meta"].is_object()) {
    const nlohmann::json& meta = m["meta"];
    for (const char* key : {"n_ctx", "n_ctx_train"})
      if (meta.contains(key) && meta[key].is_number_integer()) return meta[key].get<int64_t>();
  }
  return 0;
}

HealthChecker::HealthChecker(Router& router) : router_(router) {}

void HealthChecker::check(int i) {
  const UpstreamSpec& spec = router_.upstream(i);
  const std::string problem = check_upstream_health(spec, router_.config().health.timeout_ms);
  if (!problem.empty()) {
    router_.report_failure(i, problem);
    return;
  }
  // Learned once per healthy spell: a restarted server may have another context length.
  if (spec.kind == UpstreamKind::openai && router_.context_tokens(i) == 0)
    router_.set_context_tokens(i, fetch_context_tokens(spec, router_.config().health.timeout_ms));
  router_.report_healthy(i);
}

HealthChecker::~HealthChecker() { stop(); }

void HealthChecker::check_all_now() {
  std::vector<std::thread> threads;
  for (int i = 0; i < router_.num_upstreams(); ++i) threads.emplace_back([this, i] { check(i); });
  for (std::thread& t : threads) t.join();
}

void HealthChecker::start() { thread_ = std::thread([this] { loop(); }); }

void HealthChecker::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void HealthChecker::loop() {
  // Wake often enough to honour the shortest interval; checks themselves are rate-limited by due_for_check.
  const auto tick = std::chrono::milliseconds(std::min<int64_t>(100, router_.config().health.interval_ms));
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    lock.unlock();
    for (int i : router_.due_for_check(Clock::now())) check(i);
    lock.lock();
    cv_.wait_for(lock, tick, [&] { return stopping_; });
  }
}

}  // namespace llmesh::route
