// One accepted HTTP connection as the HTTP library's Stream: plain TCP or
// TLS, with the limits a server facing the open network needs and the
// library's own socket stream lacks.
//
//   - A request's head and body must arrive within `request_read_seconds`
//     of its first byte being awaited, however the client trickles them (a
//     byte every few seconds keeps every single read alive, not the request).
//   - The head may not exceed `max_header_bytes` in all, nor any header line
//     `max_header_line_bytes`, nor the request line `max_request_line_bytes`.
//   - Writes wait at most `write_seconds` for a client that stops reading.
// When a limit ends a read, failure() says which, so the error handler can
// answer 408, 431 or 414 instead of a bare 400.
//
// Reads are only bounded while a request is being read: once the handler
// writes, the response may stream for as long as it takes.
#pragma once

#include <httplib.h>
#include <openssl/ssl.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace llmesh::api {

struct ConnectionLimits {
  double request_read_seconds = 60;
  double write_seconds = 60;
  size_t max_header_bytes = 64u << 10;
  size_t max_header_line_bytes = 8000;     // below the library's own 8192, so ours answers first
  size_t max_request_line_bytes = 16u << 10;  // the library answers 414 past 8192; ours past this
};

enum class ReadFailure { None, Timeout, HeadersTooLarge, RequestLineTooLong };

class HttpConnection : public httplib::Stream {
 public:
  // `ssl` (owned by the caller; may be null) has completed its handshake on `sock`.
  HttpConnection(int sock, SSL* ssl, const ConnectionLimits& limits);

  // Starts the next request on this connection: its read deadline and head limits.
  void begin_request();
  // Waits up to `seconds` for the client to start another request.
  bool wait_readable(double seconds) const;

  ReadFailure failure() const { return failure_; }
  // The path of the request being read, as far as it arrived ("" before it did).
  std::string request_path() const;
  // The request's whole body was read. False when a handler answered before
  // reading it (a 401, a 503) or its length is not known up front (chunked):
  // the rest of it is still in the socket, so the connection cannot be reused.
  bool body_consumed() const { return !body_length_unknown_ && body_bytes_read_ >= content_length_; }
  // Reads and drops the rest of a body a handler did not read, when at most
  // `max_bytes` remain and they arrive within `seconds`: closing a socket with
  // unread input sends a TCP reset, which can destroy the answer just written
  // before the client reads it. Returns whether the body is now consumed.
  bool discard_unread_body(int64_t max_bytes, double seconds);
  int64_t bytes_written() const { return bytes_written_; }  // this request's response so far
  std::chrono::steady_clock::time_point request_start() const { return request_start_; }

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  int socket() const override { return sock_; }

 private:
  // Fills buffer_ from the socket before the deadline; false on EOF, error or timeout.
  bool fill();
  // Accounts for one byte of the request head; false when a limit is passed.
  bool count_head_byte(char c);
  // A complete header line (lower-cased): notes Content-Length / chunked.
  void note_body_length(const std::string& line);

  enum class Phase { RequestLine, Headers, Body };

  int sock_;
  SSL* ssl_;
  ConnectionLimits limits_;
  char buffer_[4096];
  size_t buffer_begin_ = 0, buffer_end_ = 0;
  // Per request (reset by begin_request):
  std::chrono::steady_clock::time_point request_start_, read_deadline_;
  Phase phase_ = Phase::RequestLine;
  size_t head_bytes_ = 0, line_bytes_ = 0;
  std::string request_line_;  // its first bytes, for the path of an error answered before the library parsed it
  std::string header_line_;   // the header line being read (its first bytes: enough for Content-Length)
  int64_t content_length_ = 0, body_bytes_read_ = 0;
  bool body_length_unknown_ = false;
  int64_t bytes_written_ = 0;
  ReadFailure failure_ = ReadFailure::None;
};

}  // namespace llmesh::api
