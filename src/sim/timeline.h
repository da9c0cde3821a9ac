// Per-worker activity over time, kept in a fixed number of bins so memory
// stays bounded however long the run: when time runs past the last bin, bins
// double in width and pairs merge. Feeds the HTML timeline and timeline.csv.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace llmesh::sim {

// What a worker is doing at an instant; exactly one at a time.
//   Prefill/Decode: computing its own batch of that phase.
//   Waiting: it has requests but is not computing (its group runs the other
//     phase, it finished its part of a synchronized step and waits at the
//     barrier, or its requests wait for KV restore/room).
//   Idle: it has no requests.
enum class Activity { Prefill = 0, Decode = 1, Waiting = 2, Idle = 3 };
constexpr int kNumActivities = 4;
const char* activity_name(Activity activity);

class ActivityTimeline {
 public:
  ActivityTimeline(int num_workers, int num_bins = 2048, double initial_bin_s = 0.01);

  void add(int worker_id, Activity activity, double start_s, double end_s);

  int num_workers() const { return static_cast<int>(bins_.size()); }
  int num_bins() const { return num_bins_; }
  double bin_width_s() const { return bin_width_s_; }
  // Seconds of each activity in one bin.
  const std::array<double, kNumActivities>& bin(int worker_id, int bin_index) const {
    return bins_[worker_id][bin_index];
  }

 private:
  void coarsen();

  int num_bins_;
  double bin_width_s_;
  std::vector<std::vector<std::array<double, kNumActivities>>> bins_;  // [worker][bin][activity]
};

}  // namespace llmesh::sim
