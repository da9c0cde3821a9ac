#include "sim/timeline.h"

#include <algorithm>
#include <cmath>

namespace llmesh::sim {

const char* activity_name(Activity activity) {
  switch (activity) {
    case Activity::Prefill: return "prefill";
    case Activity::Decode: return "decode";
    case Activity::Waiting: return "waiting";
    case Activity::Idle: return "idle";
  }
  return "?";
}

ActivityTimeline::ActivityTimeline(int num_workers, int num_bins, double initial_bin_s)
    : num_bins_(num_bins),
      bin_width_s_(initial_bin_s),
      bins_(num_workers, std::vector<std::array<double, kNumActivities>>(num_bins, {0, 0, 0, 0})) {}

void ActivityTimeline::coarsen() {
  for (auto& worker_bins : bins_) {
    for (int i = 0; i < num_bins_ / 2; ++i) {
      for (int a = 0; a < kNumActivities; ++a) worker_bins[i][a] = worker_bins[2 * i][a] + worker_bins[2 * i + 1][a];
    }
    for (int i = num_bins_ / 2; i < num_bins_; ++i) worker_bins[i] = {0, 0, 0, 0};
  }
  bin_width_s_ *= 2;
}

void ActivityTimeline::add(int worker_id, Activity activity, double start_s, double end_s) {
  if (end_s <= start_s) return;
  while (end_s > bin_width_s_ * num_bins_) coarsen();
  auto& worker_bins = bins_[worker_id];
  int first = static_cast<int>(start_s / bin_width_s_);
  int last = std::min(num_bins_ - 1, static_cast<int>(end_s / bin_width_s_));
  for (int b = first; b <= last; ++b) {
    double lo = std::max(start_s, b * bin_width_s_);
    double hi = std::min(end_s, (b + 1) * bin_width_s_);
    if (hi > lo) worker_bins[b][static_cast<int>(activity)] += hi - lo;
  }
}

}  // namespace llmesh::sim
