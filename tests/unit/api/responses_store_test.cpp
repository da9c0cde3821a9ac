// The bounded LRU store behind previous_response_id.
#include <gtest/gtest.h>

#include "api/responses_store.h"

namespace llmesh::api {
namespace {

using nlohmann::json;

json items(const std::string& text) { return json::array({{{"role", "user"}, {"content", text}}}); }

TEST(ResponsesStore, KeepsAndReturnsConversations) {
  ResponseStore store;
  EXPECT_FALSE(store.get("resp_a").has_value());
  store.put("resp_a", items("a"));
  EXPECT_EQ(store.get("resp_a"), items("a"));
  store.put("resp_a", items("replaced"));
  EXPECT_EQ(store.get("resp_a"), items("replaced"));
  EXPECT_EQ(store.num_entries(), 1u);
  EXPECT_EQ(store.num_bytes(), items("replaced").dump().size());
}

TEST(ResponsesStore, EvictsTheLeastRecentlyUsedBeyondTheEntryLimit) {
  ResponseStore store(/*max_entries=*/2, /*max_bytes=*/1 << 20);
  store.put("resp_1", items("1"));
  store.put("resp_2", items("2"));
  ASSERT_TRUE(store.get("resp_1").has_value());  // 1 is now more recent than 2
  store.put("resp_3", items("3"));
  EXPECT_TRUE(store.get("resp_1").has_value());
  EXPECT_FALSE(store.get("resp_2").has_value());
  EXPECT_TRUE(store.get("resp_3").has_value());
  EXPECT_EQ(store.num_entries(), 2u);
}

TEST(ResponsesStore, EvictsBeyondTheByteLimitAndSkipsOversizedEntries) {
  const size_t entry_bytes = items("xxxxxxxx").dump().size();
  ResponseStore store(/*max_entries=*/100, /*max_bytes=*/2 * entry_bytes);
  store.put("resp_1", items("xxxxxxx1"));
  store.put("resp_2", items("xxxxxxx2"));
  store.put("resp_3", items("xxxxxxx3"));
  EXPECT_FALSE(store.get("resp_1").has_value());
  EXPECT_TRUE(store.get("resp_2").has_value());
  EXPECT_TRUE(store.get("resp_3").has_value());
  EXPECT_EQ(store.num_bytes(), 2 * entry_bytes);
  store.put("resp_big", items(std::string(3 * entry_bytes, 'y')));
  EXPECT_FALSE(store.get("resp_big").has_value());
  EXPECT_EQ(store.num_entries(), 2u);  // the oversized entry evicted nothing
}

}  // namespace
}  // namespace llmesh::api
