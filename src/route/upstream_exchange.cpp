#include "route/upstream_exchange.h"

#include <thread>

namespace llmesh::route {

std::string describe_http_error(httplib::Error error) {
  switch (error) {
    case httplib::Error::Connection: return "could not connect (refused or unreachable)";
    case httplib::Error::ConnectionTimeout: return "connect timed out";
    case httplib::Error::Read: return "read failed: the upstream closed the connection or timed out";
    case httplib::Error::Write: return "write failed: the upstream closed the connection";
    case httplib::Error::Canceled: return "cancelled";
    default: return httplib::to_string(error);
  }
}

std::shared_ptr<UpstreamExchange> UpstreamExchange::start(std::shared_ptr<ConnectionPool> pool,
                                                          httplib::Request request) {
  std::shared_ptr<UpstreamExchange> ex(new UpstreamExchange());
  ex->pool_ = std::move(pool);
  ConnectionPool::Lease lease = ex->pool_->acquire();
  ex->reused_ = lease.reused;
  ex->client_ = lease.client.get();
  std::thread([ex, client = std::move(lease.client), request = std::move(request)]() mutable {
    ex->run(std::move(client), std::move(request));
  }).detach();
  return ex;
}

UpstreamExchange::~UpstreamExchange() = default;

void UpstreamExchange::run(std::unique_ptr<httplib::Client> client, httplib::Request request) {
  request.response_handler = [this](const httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = res.status;
    headers_ = res.headers;
    head_ = true;
    cv_.notify_all();
    return !cancelled_;
  };
  request.content_receiver = [this](const char* data, size_t size, uint64_t, uint64_t) {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_) return false;
    pending_.append(data, size);
    num_body_bytes_ += int64_t(size);
    cv_.notify_all();
    return true;
  };
  httplib::Result result = client->send(request);
  bool reusable = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    client_ = nullptr;  // cancel() no longer reaches it
    ended_ = true;
    if (!result) {
      failed_ = true;
      error_ = cancelled_ ? "cancelled" : describe_http_error(result.error());
    }
    reusable = result && !cancelled_;
    cv_.notify_all();
  }
  if (reusable) pool_->release(std::move(client));
}

UpstreamExchange::Progress UpstreamExchange::wait_first_bytes(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (ended_) return failed_ ? Progress::failed : Progress::finished;
    if (head_ && num_body_bytes_ > 0) {
      // A body whose length the head announced and that is all here: let the
      // pump return, so the caller can answer with Content-Length.
      auto length = headers_.find("Content-Length");  // Headers compare names case-insensitively
      if (length != headers_.end() && num_body_bytes_ >= std::atoll(length->second.c_str())) {
        cv_.wait_for(lock, std::chrono::milliseconds(100), [&] { return ended_; });
        if (ended_) return failed_ ? Progress::failed : Progress::finished;
      }
      return Progress::bytes;
    }
    if (head_) {
      if (std::chrono::steady_clock::now() >= deadline) return Progress::waiting;
      cv_.wait_until(lock, deadline);
    } else {
      cv_.wait(lock);
    }
  }
}

UpstreamExchange::Progress UpstreamExchange::take(std::string& out, std::chrono::milliseconds max_wait) {
  std::unique_lock<std::mutex> lock(mu_);
  if (pending_.empty() && !ended_) cv_.wait_for(lock, max_wait, [&] { return !pending_.empty() || ended_; });
  if (!pending_.empty()) {
    if (out.empty()) out.swap(pending_);
    else out.append(pending_);
    pending_.clear();
    return Progress::bytes;
  }
  if (ended_) return failed_ ? Progress::failed : Progress::finished;
  return Progress::waiting;
}

void UpstreamExchange::cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_ || ended_) {
    cancelled_ = true;
    return;
  }
  cancelled_ = true;
  if (client_ != nullptr) client_->stop();  // shuts the socket down; the pump's read fails at once
}

bool UpstreamExchange::head_received() const {
  std::lock_guard<std::mutex> lock(mu_);
  return head_;
}

int64_t UpstreamExchange::num_body_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return num_body_bytes_;
}

std::string UpstreamExchange::error_text() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

}  // namespace llmesh::route
