// Minimal leveled logging to stderr. LLMESH_LOG=debug|info|warn|error (default info).
#pragma once

#include <fmt/format.h>

#include <cstdio>

namespace llmesh {

enum class LogLevel { Debug = 0, Info = 1, Warn = 2, Error = 3 };
LogLevel log_level();
void log_write(LogLevel level, const std::string& message);

template <typename... Args>
void log_debug(fmt::format_string<Args...> f, Args&&... a) {
  if (log_level() <= LogLevel::Debug) log_write(LogLevel::Debug, fmt::format(f, std::forward<Args>(a)...));
}
template <typename... Args>
void log_info(fmt::format_string<Args...> f, Args&&... a) {
  if (log_level() <= LogLevel::Info) log_write(LogLevel::Info, fmt::format(f, std::forward<Args>(a)...));
}
template <typename... Args>
void log_warn(fmt::format_string<Args...> f, Args&&... a) {
  if (log_level() <= LogLevel::Warn) log_write(LogLevel::Warn, fmt::format(f, std::forward<Args>(a)...));
}
template <typename... Args>
void log_error(fmt::format_string<Args...> f, Args&&... a) {
  log_write(LogLevel::Error, fmt::format(f, std::forward<Args>(a)...));
}

}  // namespace llmesh
