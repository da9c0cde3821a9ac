#include "core/log.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace llmesh {

LogLevel log_level() {
  static const LogLevel level = [] {
    const char* env = std::getenv("LLMESH_LOG");
    if (!env) return LogLevel::Info;
    if (!std::strcmp(env, "debug")) return LogLevel::Debug;
    if (!std::strcmp(env, "warn")) return LogLevel::Warn;
    if (!std::strcmp(env, "error")) return LogLevel::Error;
    return LogLevel::Info;
  }();
  return level;
}

void log_write(LogLevel level, const std::string& message) {
  static std::mutex mu;
  static const char* names[] = {"debug", "info", "warn", "error"};
  std::lock_guard lock(mu);
  fmt::print(stderr, "[llmesh {}] {}\n", names[int(level)], message);
}

}  // namespace llmesh
