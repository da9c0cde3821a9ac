// A progress bar for long work (loading, converting, generating models).
// Draws on stderr only when stderr is a terminal, at most ~10 times a second;
// silent in pipes, logs and tests.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace llmesh {

class ProgressBar {
 public:
  // `unit` "B" prints sizes in MiB/GiB; anything else prints plain counts.
  ProgressBar(std::string label, uint64_t total, std::string unit = "");
  ~ProgressBar();
  void update(uint64_t done);
  void finish();

 private:
  void draw(bool final);
  std::string label_, unit_;
  uint64_t total_, done_ = 0;
  bool enabled_, finished_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace llmesh
