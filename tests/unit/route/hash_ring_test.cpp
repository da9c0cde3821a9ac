#include "route/hash_ring.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <map>
#include <set>

namespace llmesh::route {
namespace {

uint64_t key_hash(int i) {
  const std::string k = "session-" + std::to_string(i);
  return XXH3_64bits(k.data(), k.size());
}

TEST(HashRing, WalkVisitsEveryTargetOnce) {
  HashRing ring({{"a", 1}, {"b", 1}, {"c", 2}});
  EXPECT_EQ(ring.num_points(), size_t(160 * 4));
  for (int i = 0; i < 100; ++i) {
    const std::vector<int> walk = ring.walk(key_hash(i));
    ASSERT_EQ(walk.size(), 3u);
    EXPECT_EQ(std::set<int>(walk.begin(), walk.end()).size(), 3u);
    EXPECT_EQ(walk.front(), ring.home(key_hash(i)));
  }
}

TEST(HashRing, PlacementDependsOnNamesNotOrder) {
  HashRing abc({{"a", 1}, {"b", 1}, {"c", 1}});
  HashRing cab({{"c", 1}, {"a", 1}, {"b", 1}});
  const std::vector<std::string> names_abc = {"a", "b", "c"}, names_cab = {"c", "a", "b"};
  for (int i = 0; i < 200; ++i)
    EXPECT_EQ(names_abc[size_t(abc.home(key_hash(i)))], names_cab[size_t(cab.home(key_hash(i)))]);
}

TEST(HashRing, WeightsSetTheShare) {
  HashRing ring({{"a", 1}, {"b", 3}});
  std::map<int, int> count;
  const int n = 20000;
  for (int i = 0; i < n; ++i) ++count[ring.home(key_hash(i))];
  EXPECT_NEAR(double(count[1]) / n, 0.75, 0.05);
}

TEST(HashRing, RemovingATargetMovesOnlyItsKeys) {
  HashRing three({{"a", 1}, {"b", 1}, {"c", 1}});
  HashRing two({{"a", 1}, {"c", 1}});  // b gone
  const std::vector<std::string> n3 = {"a", "b", "c"}, n2 = {"a", "c"};
  int moved = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::string before = n3[size_t(three.home(key_hash(i)))];
    const std::string after = n2[size_t(two.home(key_hash(i)))];
    if (before != "b") {
      EXPECT_EQ(before, after) << "key " << i << " moved although its target stayed";
    } else {
      ++moved;
      // It goes to the next target on its walk in the old ring.
      EXPECT_EQ(after, n3[size_t(three.walk(key_hash(i))[1])]);
    }
  }
  EXPECT_NEAR(moved / 3000.0, 1.0 / 3.0, 0.06);
}

TEST(HashRing, AddingATargetTakesItsShareFromAll) {
  HashRing three({{"a", 1}, {"b", 1}, {"c", 1}});
  HashRing four({{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}});
  int taken = 0;
  for (int i = 0; i < 4000; ++i) {
    const int before = three.home(key_hash(i)), after = four.home(key_hash(i));
    if (after == 3) ++taken;
    else EXPECT_EQ(before, after);
  }
  EXPECT_NEAR(taken / 4000.0, 0.25, 0.05);
}

}  // namespace
}  // namespace llmesh::route
