#include "route/connection_pool.h"

#include <httplib.h>

namespace llmesh::route {

namespace {

void set_timeout(double seconds, const std::function<void(time_t, time_t)>& setter) {
  const auto whole = static_cast<time_t>(seconds);
  setter(whole, static_cast<time_t>((seconds - double(whole)) * 1e6));
}

}  // namespace

ConnectionPool::ConnectionPool(std::string host, int port, ConnectionOptions options)
    : host_(std::move(host)), port_(port), options_(options) {}

ConnectionPool::~ConnectionPool() = default;

ConnectionPool::Lease ConnectionPool::acquire() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = Clock::now();
    while (!idle_.empty()) {
      Idle idle = std::move(idle_.back());
      idle_.pop_back();
      if (std::chrono::duration<double>(now - idle.since).count() <= options_.max_idle_s)
        return {std::move(idle.client), true};
    }
  }
  auto client = std::make_unique<httplib::Client>(host_, port_);
  set_timeout(options_.connect_timeout_s, [&](time_t s, time_t us) { client->set_connection_timeout(s, us); });
  set_timeout(options_.read_timeout_s, [&](time_t s, time_t us) { client->set_read_timeout(s, us); });
  set_timeout(options_.write_timeout_s, [&](time_t s, time_t us) { client->set_write_timeout(s, us); });
  client->set_keep_alive(true);
  client->set_tcp_nodelay(true);  // small SSE chunks and requests must not wait for Nagle
  client->set_decompress(false);  // bytes pass through as the upstream sent them
  return {std::move(client), false};
}

void ConnectionPool::release(std::unique_ptr<httplib::Client> client) {
  std::lock_guard<std::mutex> lock(mu_);
  if (idle_.size() >= options_.max_idle) idle_.erase(idle_.begin());
  idle_.push_back({std::move(client), Clock::now()});
}

size_t ConnectionPool::num_idle() const {
  std::lock_guard<std::mutex> lock(mu_);
  return idle_.size();
}

}  // namespace llmesh::route
