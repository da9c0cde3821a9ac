// A consistent-hash ring: each target owns round(vnodes_per_weight x weight)
// points placed by hashing "name#i"; a key belongs to the first point at or
// after its hash (wrapping), and the walk from there visits every target once,
// in a fixed order per key.
//
// Guarantees:
//   * Placement depends only on target names, weights and the key, never on
//     the order targets were added or on ports picked at run time.
//   * Removing or skipping a target moves only the keys whose walk hit it
//     first; every other key keeps its target. Adding one takes about
//     weight/total_weight of the keys, from all others alike.
//   * walk() lists each target exactly once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llmesh::route {

class HashRing {
 public:
  struct Target {
    std::string name;
    double weight = 1.0;
  };

  HashRing(const std::vector<Target>& targets, int vnodes_per_weight = 160);

  // Target indexes (into the constructor's list) in this key's preference order.
  std::vector<int> walk(uint64_t key_hash) const;
  // The first of walk(key_hash).
  int home(uint64_t key_hash) const;

  int num_targets() const { return num_targets_; }
  size_t num_points() const { return points_.size(); }

 private:
  struct Point {
    uint64_t hash;
    int target;
  };
  size_t first_point(uint64_t key_hash) const;

  std::vector<Point> points_;  // sorted by hash
  int num_targets_ = 0;
};

}  // namespace llmesh::route
