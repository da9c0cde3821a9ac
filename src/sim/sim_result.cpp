#include "sim/sim_result.h"

#include <algorithm>
#include <cmath>

namespace llmesh::sim {

Distribution summarize(std::vector<double> values) {
  Distribution d;
  d.count = static_cast<int64_t>(values.size());
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  d.mean = sum / values.size();
  // Nearest-rank percentiles.
  auto rank = [&](double p) {
    size_t index = static_cast<size_t>(std::ceil(p * values.size()));
    return values[std::min(values.size() - 1, index == 0 ? 0 : index - 1)];
  };
  d.p50 = rank(0.50);
  d.p90 = rank(0.90);
  d.p99 = rank(0.99);
  d.max = values.back();
  return d;
}

double SimResult::mean_utilization() const {
  if (workers.empty()) return 0;
  double total = 0;
  for (const WorkerStats& w : workers) total += w.utilization(makespan_s);
  return total / workers.size();
}

double SimResult::mean_fraction(Activity activity) const {
  if (workers.empty() || makespan_s <= 0) return 0;
  double total = 0;
  for (const WorkerStats& w : workers) total += w.seconds[static_cast<int>(activity)];
  return total / (workers.size() * makespan_s);
}

}  // namespace llmesh::sim
