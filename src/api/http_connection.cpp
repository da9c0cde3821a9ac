#include "api/http_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace llmesh::api {

namespace {

using Clock = std::chrono::steady_clock;

int millis_until(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return int(std::clamp<int64_t>(left, 0, 1 << 30));
}

// Waits for `events` on `sock` for up to `timeout_ms`; true when ready (or
// when the peer hung up: the next read or write reports it).
bool poll_socket(int sock, short events, int timeout_ms) {
  pollfd fd{sock, events, 0};
  for (;;) {
    const int n = ::poll(&fd, 1, timeout_ms);
    if (n >= 0) return n > 0;
    if (errno != EINTR) return false;
  }
}

void address_of(const sockaddr_storage& addr, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(addr);
    inet_ntop(AF_INET, &a.sin_addr, text, sizeof(text));
    port = ntohs(a.sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(addr);
    inet_ntop(AF_INET6, &a.sin6_addr, text, sizeof(text));
    port = ntohs(a.sin6_port);
  }
  ip = text;
}

}  // namespace

HttpConnection::HttpConnection(int sock, SSL* ssl, const ConnectionLimits& limits)
    : sock_(sock), ssl_(ssl), limits_(limits) {
  begin_request();
}

void HttpConnection::begin_request() {
  request_start_ = Clock::now();
  read_deadline_ = request_start_ + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(limits_.request_read_seconds));
  phase_ = Phase::RequestLine;
  head_bytes_ = line_bytes_ = 0;
  request_line_.clear();
  header_line_.clear();
  content_length_ = body_bytes_read_ = 0;
  body_length_unknown_ = false;
  bytes_written_ = 0;
  failure_ = ReadFailure::None;
}

bool HttpConnection::wait_readable(double seconds) const {
  if (buffer_begin_ < buffer_end_ || (ssl_ && SSL_pending(ssl_) > 0)) return true;
  return poll_socket(sock_, POLLIN, int(seconds * 1000));
}

bool HttpConnection::is_readable() const { return wait_readable(0); }

bool HttpConnection::is_writable() const {
  // Ready, and the peer has not hung up (a closed client ends a stream at its next event).
  pollfd fd{sock_, POLLOUT, 0};
  if (::poll(&fd, 1, int(limits_.write_seconds * 1000)) <= 0) return false;
  return (fd.revents & (POLLERR | POLLHUP)) == 0;
}

bool HttpConnection::fill() {
  if (!(ssl_ && SSL_pending(ssl_) > 0) && !poll_socket(sock_, POLLIN, millis_until(read_deadline_))) {
    failure_ = ReadFailure::Timeout;
    return false;
  }
  ssize_t n;
  if (ssl_) {
    n = SSL_read(ssl_, buffer_, int(sizeof(buffer_)));
  } else {
    do n = ::recv(sock_, buffer_, sizeof(buffer_), 0);
    while (n < 0 && errno == EINTR);
  }
  if (n <= 0) return false;
  buffer_begin_ = 0;
  buffer_end_ = size_t(n);
  return true;
}

void HttpConnection::note_body_length(const std::string& line) {
  constexpr std::string_view kLength = "content-length:", kEncoding = "transfer-encoding:";
  if (line.starts_with(kLength)) {
    content_length_ = std::strtoll(line.c_str() + kLength.size(), nullptr, 10);
  } else if (line.starts_with(kEncoding) && line.find("chunked") != std::string::npos) {
    body_length_unknown_ = true;
  }
}

bool HttpConnection::count_head_byte(char c) {
  ++head_bytes_;
  ++line_bytes_;
  const bool line_end = c == '\n';
  if (phase_ == Phase::RequestLine) {
    if (request_line_.size() < 512) request_line_ += c;
    if (line_bytes_ > limits_.max_request_line_bytes) return failure_ = ReadFailure::RequestLineTooLong, false;
    if (line_end) phase_ = Phase::Headers, line_bytes_ = 0;
  } else {
    if (line_bytes_ > limits_.max_header_line_bytes || head_bytes_ > limits_.max_header_bytes) {
      return failure_ = ReadFailure::HeadersTooLarge, false;
    }
    if (header_line_.size() < 128) header_line_ += char(std::tolower((unsigned char)c));
    if (line_end) {
      if (line_bytes_ <= 2) phase_ = Phase::Body;  // the empty line ("\r\n" or "\n") ends the head
      note_body_length(header_line_);
      header_line_.clear();
      line_bytes_ = 0;
    }
  }
  return true;
}

ssize_t HttpConnection::read(char* ptr, size_t size) {
  if (failure_ != ReadFailure::None) return -1;
  if (buffer_begin_ == buffer_end_ && !fill()) return -1;
  size_t n = std::min(size, buffer_end_ - buffer_begin_);
  const bool in_body = phase_ == Phase::Body;
  if (!in_body) {
    // The library reads the head a byte at a time; count what it takes.
    for (size_t i = 0; i < n; ++i) {
      if (!count_head_byte(buffer_[buffer_begin_ + i])) return -1;
      if (phase_ == Phase::Body) {
        n = i + 1;
        break;
      }
    }
  }
  if (in_body) body_bytes_read_ += int64_t(n);
  std::memcpy(ptr, buffer_ + buffer_begin_, n);
  buffer_begin_ += n;
  return ssize_t(n);
}

bool HttpConnection::discard_unread_body(int64_t max_bytes, double seconds) {
  if (body_consumed()) return true;
  if (body_length_unknown_ || failure_ != ReadFailure::None || content_length_ - body_bytes_read_ > max_bytes) return false;
  phase_ = Phase::Body;
  read_deadline_ = std::min(read_deadline_, std::chrono::steady_clock::now() +
                                                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                    std::chrono::duration<double>(seconds)));
  char sink[4096];
  while (!body_consumed()) {
    const size_t want = size_t(std::min<int64_t>(int64_t(sizeof(sink)), content_length_ - body_bytes_read_));
    if (read(sink, want) <= 0) return false;
  }
  return true;
}

ssize_t HttpConnection::write(const char* ptr, size_t size) {
  if (!poll_socket(sock_, POLLOUT, int(limits_.write_seconds * 1000))) return -1;
  ssize_t n;
  if (ssl_) {
    n = SSL_write(ssl_, ptr, int(std::min<size_t>(size, 1 << 30)));
  } else {
    do n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
  }
  if (n > 0) bytes_written_ += n;
  return n;
}

std::string HttpConnection::request_path() const {
  const size_t start = request_line_.find(' ');
  if (start == std::string::npos) return "";
  const size_t end = request_line_.find_first_of(" ?\r\n", start + 1);
  return request_line_.substr(start + 1, end == std::string::npos ? std::string::npos : end - start - 1);
}

void HttpConnection::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getpeername(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) address_of(addr, ip, port);
}

void HttpConnection::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) address_of(addr, ip, port);
}

}  // namespace llmesh::api
