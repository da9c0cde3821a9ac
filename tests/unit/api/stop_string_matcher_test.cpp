#include "api/stop_string_matcher.h"

#include <gtest/gtest.h>

namespace llmesh::api {
namespace {

// Feeds pieces one by one and returns everything released.
std::string feed(StopStringMatcher& m, const std::vector<std::string>& pieces) {
  std::string out;
  for (const auto& p : pieces) out += m.push(p);
  return out;
}

TEST(StopStringMatcher, PassesTextWithoutStops) {
  StopStringMatcher m({});
  EXPECT_EQ(feed(m, {"Hello", ", ", "world"}), "Hello, world");
  EXPECT_EQ(m.flush(), "");
  EXPECT_FALSE(m.stopped());
}

TEST(StopStringMatcher, StopSplitAcrossPiecesNeverLeaks) {
  StopStringMatcher m({"STOP"});
  EXPECT_EQ(m.push("abc S"), "abc ");  // "S" may start STOP: held back
  EXPECT_EQ(m.push("T"), "");
  EXPECT_EQ(m.push("O"), "");
  EXPECT_EQ(m.push("Pxyz"), "");
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.matched(), "STOP");
  EXPECT_EQ(m.push("more"), "");  // ignored after the stop
  EXPECT_EQ(m.flush(), "");
}

TEST(StopStringMatcher, FalseStartIsReleased) {
  StopStringMatcher m({"STOP"});
  EXPECT_EQ(m.push("ST"), "");
  EXPECT_EQ(m.push("AR"), "STAR");
  EXPECT_FALSE(m.stopped());
  EXPECT_EQ(m.push("S"), "");
  EXPECT_EQ(m.flush(), "S");  // the end of the stream decides: not a stop
}

TEST(StopStringMatcher, EarliestOfSeveralWins) {
  StopStringMatcher m({"world", "lo"});
  EXPECT_EQ(feed(m, {"hello world"}), "hel");
  EXPECT_EQ(m.matched(), "lo");
}

TEST(StopStringMatcher, OverlappingPrefixesHoldTheLongestCandidate) {
  StopStringMatcher m({"aab"});
  EXPECT_EQ(m.push("xaa"), "x");
  EXPECT_EQ(m.push("a"), "a");   // "aaa": only the last "aa" can still start "aab"
  EXPECT_EQ(m.push("b!"), "");
  EXPECT_TRUE(m.stopped());
}

TEST(StopStringMatcher, StopAtVeryStartGivesEmptyText) {
  StopStringMatcher m({"\n\n"});
  EXPECT_EQ(m.push("\n"), "");
  EXPECT_EQ(m.push("\nrest"), "");
  EXPECT_TRUE(m.stopped());
}

TEST(StopStringMatcher, MultibyteStopString) {
  StopStringMatcher m({"é!"});
  EXPECT_EQ(m.push("caf\xC3\xA9"), "caf");
  EXPECT_EQ(m.push("?"), "\xC3\xA9?");
}

}  // namespace
}  // namespace llmesh::api
