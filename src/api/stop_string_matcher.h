// Finds stop strings in streamed text, across token boundaries, without ever
// letting any part of a stop string reach the client.
//
// push() returns the text that is certainly not part of a stop string; a tail
// that could be the beginning of one is held back until more text decides it.
// Once a stop string is found, the text before it is returned, stopped()
// becomes true, and everything after is ignored.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace llmesh::api {

class StopStringMatcher {
 public:
  explicit StopStringMatcher(std::vector<std::string> stop_strings);

  std::string push(std::string_view text);
  // End of the stream: the held-back tail (it did not become a stop string).
  std::string flush();

  bool stopped() const { return stopped_; }
  // The stop string that matched ("" when none).
  const std::string& matched() const { return matched_; }

 private:
  std::vector<std::string> stop_strings_;  // non-empty strings only
  std::string pending_;
  bool stopped_ = false;
  std::string matched_;
};

}  // namespace llmesh::api
