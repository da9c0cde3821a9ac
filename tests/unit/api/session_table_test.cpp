#include "api/session_table.h"

#include <gtest/gtest.h>

namespace llmesh::api {
namespace {

SessionKey key(uint64_t hash, SessionKeySource source = SessionKeySource::header) {
  return {std::to_string(hash), source, hash};
}

TEST(SessionTable, CountsTurnsAndTheLastTurnsReuse) {
  SessionTable table;
  table.record(key(7), 1000, 0, 50, true);
  table.record(key(7), 1600, 990, 40, true);  // 990 of the previous 1,000 reused
  table.record(key(9, SessionKeySource::prompt_cache_key), 300, 0, 10, false);
  const nlohmann::json v = table.view();
  ASSERT_EQ(v["num_sessions"], 2);
  const nlohmann::json& first = v["sessions"][0];  // most recently seen first
  EXPECT_EQ(first["id"], "0000000000000009");
  EXPECT_EQ(first["source"], "prompt_cache_key");
  EXPECT_EQ(first["num_failed"], 1);
  EXPECT_TRUE(first["last_turn_reuse"].is_null());  // one turn: nothing to reuse yet
  const nlohmann::json& second = v["sessions"][1];
  EXPECT_EQ(second["num_requests"], 2);
  EXPECT_EQ(second["last_prompt_tokens"], 1600);
  EXPECT_EQ(second["total_cached_tokens"], 990);
  EXPECT_DOUBLE_EQ(second["last_turn_reuse"].get<double>(), 0.99);
}

TEST(SessionTable, ForgetsTheLeastRecentlySeenPastItsBound) {
  SessionTable table(2);
  table.record(key(1), 10, 0, 1, true);
  table.record(key(2), 10, 0, 1, true);
  table.record(key(1), 20, 10, 1, true);  // 1 is now the most recent
  table.record(key(3), 10, 0, 1, true);   // 2 goes
  const nlohmann::json v = table.view();
  ASSERT_EQ(v["num_sessions"], 2);
  EXPECT_EQ(v["sessions"][0]["id"], "0000000000000003");
  EXPECT_EQ(v["sessions"][1]["id"], "0000000000000001");
  table.record(SessionKey{}, 10, 0, 1, true);  // no session: not recorded
  EXPECT_EQ(table.view()["num_sessions"], 2);
}

}  // namespace
}  // namespace llmesh::api
