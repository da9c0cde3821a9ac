#include "api/access_log.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstring>
#include <ctime>

#include "core/error.h"

namespace llmesh::api {

namespace {

std::string utc_now_iso8601() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[40];
  std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, int(millis));
  return text;
}

}  // namespace

AccessLog::AccessLog(const std::string& path) : file_(std::fopen(path.c_str(), "a")) {
  check(file_ != nullptr, "--access-log {}: cannot open for appending: {}", path, std::strerror(errno));
}

AccessLog::~AccessLog() {
  if (file_) std::fclose(file_);
}

void AccessLog::write(const AccessRecord& r) {
  nlohmann::ordered_json line = {{"time", utc_now_iso8601()},
                                 {"remote", r.remote},
                                 {"method", r.method},
                                 {"path", r.path},
                                 {"status", r.status},
                                 {"bytes", r.bytes},
                                 {"duration_ms", std::round(r.duration_ms * 10) / 10},
                                 {"request_id", r.request_id},
                                 {"key_id", r.key_id}};
  // Replace, not throw: a path with invalid UTF-8 must still be logged.
  const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard lock(mu_);
  std::fwrite(text.data(), 1, text.size(), file_);
  std::fflush(file_);
}

}  // namespace llmesh::api
