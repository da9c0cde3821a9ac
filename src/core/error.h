// Errors a user can act on.
//
// llmesh reports bad input (a truncated file, an unknown dtype, a template
// error, an over-long prompt) by throwing llmesh::Error with a message that
// names the file or argument and the problem. Commands catch it at the top,
// print it and exit non-zero; the server turns it into a protocol error.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace llmesh {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Throws Error with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

// Throws Error when `condition` is false.
template <typename... Args>
void check(bool condition, fmt::format_string<Args...> format, Args&&... args) {
  if (!condition) throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace llmesh
