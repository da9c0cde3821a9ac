#include "route/hash_ring.h"

#include <xxhash.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace llmesh::route {

HashRing::HashRing(const std::vector<Target>& targets, int vnodes_per_weight)
    : num_targets_(int(targets.size())) {
  check(vnodes_per_weight > 0, "vnodes_per_weight={} must be > 0", vnodes_per_weight);
  for (int t = 0; t < num_targets_; ++t) {
    const Target& target = targets[size_t(t)];
    check(target.weight > 0, "target '{}' has weight {}; it must be > 0", target.name, target.weight);
    const int num_points = std::max(1, int(std::lround(target.weight * vnodes_per_weight)));
    for (int i = 0; i < num_points; ++i) {
      const std::string label = target.name + "#" + std::to_string(i);
      points_.push_back({XXH3_64bits(label.data(), label.size()), t});
    }
  }
  // Equal hashes (vanishingly rare) are ordered by target so the ring is still deterministic.
  std::sort(points_.begin(), points_.end(),
            [](const Point& a, const Point& b) { return a.hash != b.hash ? a.hash < b.hash : a.target < b.target; });
}

size_t HashRing::first_point(uint64_t key_hash) const {
  auto it = std::lower_bound(points_.begin(), points_.end(), key_hash,
                             [](const Point& p, uint64_t h) { return p.hash < h; });
  return it == points_.end() ? 0 : size_t(it - points_.begin());
}

int HashRing::home(uint64_t key_hash) const {
  if (points_.empty()) return -1;
  return points_[first_point(key_hash)].target;
}

std::vector<int> HashRing::walk(uint64_t key_hash) const {
  std::vector<int> order;
  if (points_.empty()) return order;
  std::vector<bool> seen(size_t(num_targets_), false);
  const size_t start = first_point(key_hash);
  for (size_t i = 0; i < points_.size() && int(order.size()) < num_targets_; ++i) {
    const int t = points_[(start + i) % points_.size()].target;
    if (!seen[size_t(t)]) {
      seen[size_t(t)] = true;
      order.push_back(t);
    }
  }
  return order;
}

}  // namespace llmesh::route
