#include "api/http_listener.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/log.h"

namespace llmesh::api {

struct HttpListener::Counters {
  std::atomic<int64_t> num_busy_workers{0};
  std::atomic<int64_t> num_connections{0};
  std::atomic<int64_t> num_overflow_connections{0};
  std::atomic<int64_t> num_dropped_connections{0};
  std::atomic<int64_t> num_tls_handshake_failures{0};
};

namespace {

// How the pool handed this thread its connection.
enum class Admission { Served, Overflow, Dropped };

thread_local Admission t_admission = Admission::Served;
thread_local HttpConnection* t_connection = nullptr;

// The HTTP library's task queue: one task per accepted connection (see the header's diagram).
class WorkerPool : public httplib::TaskQueue {
 public:
  WorkerPool(const ListenerOptions& options, std::shared_ptr<HttpListener::Counters> counters)
      : num_idle_(size_t(options.num_workers)), max_backlog_(size_t(options.max_overflow_backlog)),
        counters_(std::move(counters)) {
    for (int i = 0; i < options.num_workers; ++i) threads_.emplace_back([this] { work(served_, Admission::Served); });
    for (int i = 0; i < options.num_overflow_workers; ++i) {
      threads_.emplace_back([this] { work(overflow_, Admission::Overflow); });
    }
  }

  void enqueue(std::function<void()> fn) override {
    std::unique_lock lock(mu_);
    if (num_idle_ > served_.size()) {
      served_.push_back(std::move(fn));
    } else if (overflow_.size() < max_backlog_) {
      overflow_.push_back(std::move(fn));
    } else {
      lock.unlock();
      counters_->num_dropped_connections++;
      t_admission = Admission::Dropped;  // on the accepting thread: the task only closes the socket
      fn();
      t_admission = Admission::Served;
      return;
    }
    cv_.notify_all();
  }

  void shutdown() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

 private:
  void work(std::deque<std::function<void()>>& jobs, Admission admission) {
    t_admission = admission;
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || !jobs.empty(); });
        if (jobs.empty()) return;  // stopping, and nothing left to serve
        fn = std::move(jobs.front());
        jobs.pop_front();
        if (admission == Admission::Served) --num_idle_;
      }
      if (admission == Admission::Served) counters_->num_busy_workers++;
      fn();
      if (admission == Admission::Served) {
        counters_->num_busy_workers--;
        std::lock_guard lock(mu_);
        ++num_idle_;
      }
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> served_, overflow_;
  size_t num_idle_;  // served workers not running a connection
  size_t max_backlog_;
  bool stopping_ = false;
  std::shared_ptr<HttpListener::Counters> counters_;
  std::vector<std::thread> threads_;
};

std::string openssl_error() {
  const unsigned long code = ERR_get_error();
  if (code == 0) return "unknown error";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

// Bounds the blocking TLS calls: a handshake or record the client never finishes.
void set_socket_timeouts(int sock, double read_seconds, double write_seconds) {
  auto timeval_of = [](double s) {
    timeval tv{};
    tv.tv_sec = time_t(s);
    tv.tv_usec = suseconds_t((s - double(tv.tv_sec)) * 1e6);
    return tv;
  };
  const timeval rcv = timeval_of(read_seconds), snd = timeval_of(write_seconds);
  setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &rcv, sizeof(rcv));
  setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &snd, sizeof(snd));
}

}  // namespace

HttpListener::HttpListener(const ListenerOptions& options)
    : options_(options), counters_(std::make_shared<Counters>()) {
  if (!options_.tls_cert_file.empty() || !options_.tls_key_file.empty()) {
    check(!options_.tls_cert_file.empty() && !options_.tls_key_file.empty(),
          "TLS needs both --tls-cert and --tls-key");
    ssl_ctx_ = SSL_CTX_new(TLS_server_method());
    check(ssl_ctx_ != nullptr, "cannot create a TLS context: {}", openssl_error());
    SSL_CTX_set_min_proto_version(ssl_ctx_, TLS1_2_VERSION);
    SSL_CTX_set_mode(ssl_ctx_, SSL_MODE_AUTO_RETRY);
    check(SSL_CTX_use_certificate_chain_file(ssl_ctx_, options_.tls_cert_file.c_str()) == 1,
          "--tls-cert {}: cannot load the certificate (PEM): {}", options_.tls_cert_file, openssl_error());
    check(SSL_CTX_use_PrivateKey_file(ssl_ctx_, options_.tls_key_file.c_str(), SSL_FILETYPE_PEM) == 1,
          "--tls-key {}: cannot load the private key (PEM): {}", options_.tls_key_file, openssl_error());
    check(SSL_CTX_check_private_key(ssl_ctx_) == 1, "--tls-key {} does not match the certificate in --tls-cert {}",
          options_.tls_key_file, options_.tls_cert_file);
  }
  set_keep_alive_timeout(time_t(options_.keep_alive_seconds));  // what the Keep-Alive header announces
  set_keep_alive_max_count(size_t(options_.max_keep_alive_requests));
  const ListenerOptions pool_options = options_;
  auto counters = counters_;
  new_task_queue = [pool_options, counters] { return new WorkerPool(pool_options, counters); };
}

HttpListener::~HttpListener() {
  if (ssl_ctx_) SSL_CTX_free(ssl_ctx_);
}

HttpConnection* HttpListener::current_connection() { return t_connection; }
bool HttpListener::overloaded() { return t_admission == Admission::Overflow; }

ListenerStats HttpListener::stats() const {
  ListenerStats s;
  s.num_workers = options_.num_workers;
  s.num_busy_workers = counters_->num_busy_workers.load();
  s.num_connections = counters_->num_connections.load();
  s.num_overflow_connections = counters_->num_overflow_connections.load();
  s.num_dropped_connections = counters_->num_dropped_connections.load();
  s.num_tls_handshake_failures = counters_->num_tls_handshake_failures.load();
  return s;
}

void HttpListener::answer_read_failure(HttpConnection& connection) const {
  if (connection.failure() == ReadFailure::None || connection.bytes_written() > 0) return;
  const int status = connection.failure() == ReadFailure::Timeout              ? 408
                     : connection.failure() == ReadFailure::RequestLineTooLong ? 414
                                                                               : 431;
  const char* reason = status == 408 ? "Request Timeout" : status == 414 ? "URI Too Long" : "Request Header Fields Too Large";
  const std::string body = read_failure_body_ ? read_failure_body_(status, connection.request_path()) : "";
  const std::string response = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
      status, reason, body.size(), body);
  connection.write(response.data(), response.size());
}

bool HttpListener::process_and_close_socket(int sock) {
  counters_->num_connections++;
  if (t_admission == Admission::Overflow) counters_->num_overflow_connections++;
  auto close_socket = [sock] {
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
  };
  if (t_admission == Admission::Dropped) return close_socket(), true;
  // The library writes a response's head and body separately: with Nagle on, the body
  // would wait for the client's delayed ACK (~40 ms on every kept-alive request).
  const int one = 1;
  setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

  SSL* ssl = nullptr;
  if (ssl_ctx_) {
    set_socket_timeouts(sock, 10.0, options_.limits.write_seconds);
    ssl = SSL_new(ssl_ctx_);
    if (!ssl || SSL_set_fd(ssl, sock) != 1 || SSL_accept(ssl) != 1) {
      counters_->num_tls_handshake_failures++;
      if (ssl) SSL_free(ssl);
      ERR_clear_error();
      return close_socket(), false;
    }
  }

  HttpConnection connection(sock, ssl, options_.limits);
  t_connection = &connection;
  const bool overflow = t_admission == Admission::Overflow;
  bool closed = false;
  for (int64_t n = 0; !closed; ++n) {
    if (n > 0) {
      // Keep-alive: wait for the next request, in slices so a stop is seen soon.
      bool ready = false;
      for (double waited = 0; !ready && waited < options_.keep_alive_seconds && !shutting_down_; waited += 0.1) {
        ready = connection.wait_readable(0.1);
      }
      if (!ready || shutting_down_) break;
      connection.begin_request();
    }
    const bool close = overflow || n + 1 >= options_.max_keep_alive_requests || shutting_down_;
    if (!process_request(connection, close, closed, [](httplib::Request&) {})) {
      answer_read_failure(connection);
      break;
    }
    // After a limit ended a read, the rest of that request is still in the socket: no keep-alive.
    // So is an answer given before the body was read (a 401, a 503).
    const bool unread_body = !connection.body_consumed();
    if (unread_body) connection.discard_unread_body(int64_t(1) << 20, 2.0);  // then the close is clean, not a reset
    if (close || connection.failure() != ReadFailure::None || unread_body) break;
  }
  t_connection = nullptr;
  if (ssl) {
    SSL_shutdown(ssl);
    SSL_free(ssl);
  }
  close_socket();
  return true;
}

namespace {

// The library keeps its listening socket to itself: find it among this
// process's descriptors (a listening socket on `port`) and listen again with a
// longer queue (Linux updates the backlog of a socket already listening).
void raise_listen_backlog(int port) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    int fd = -1;
    try {
      fd = std::stoi(entry.path().filename().string());
    } catch (const std::exception&) {
      continue;
    }
    int listening = 0;
    socklen_t len = sizeof(listening);
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening) continue;
    sockaddr_storage addr{};
    socklen_t addr_len = sizeof(addr);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &addr_len) != 0) continue;
    int bound_port = -1;
    if (addr.ss_family == AF_INET) bound_port = ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    if (addr.ss_family == AF_INET6) bound_port = ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
    if (bound_port == port && ::listen(fd, SOMAXCONN) != 0) log_warn("cannot raise the listen queue of port {}", port);
  }
}

}  // namespace

bool HttpListener::bind(const std::string& host, int port) {
  if (!bind_to_port(host, port)) return false;
  raise_listen_backlog(port);
  return true;
}

int HttpListener::bind_any(const std::string& host) {
  const int port = bind_to_any_port(host);
  if (port > 0) raise_listen_backlog(port);
  return port > 0 ? port : -1;
}

void HttpListener::shut_down() {
  shutting_down_ = true;
  if (is_running()) stop();
}

}  // namespace llmesh::api
