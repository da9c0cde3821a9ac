// cache_control TTLs found wherever Anthropic allows a breakpoint; bad ttls named.
#include "api/cache_retention.h"

#include <gtest/gtest.h>

#include "api/api_error.h"

namespace llmesh::api {
namespace {

using OJson = nlohmann::ordered_json;

TEST(CacheRetention, TheLongestTtlAnywhereWins) {
  EXPECT_EQ(anthropic_cache_ttl_seconds(OJson::parse(R"({"messages":[{"role":"user","content":"hi"}]})")), 0);
  EXPECT_EQ(anthropic_cache_ttl_seconds(OJson::parse(
                R"({"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}]})")),
            kCacheTtlDefaultSeconds);
  EXPECT_EQ(anthropic_cache_ttl_seconds(OJson::parse(R"({
      "system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral","ttl":"5m"}}],
      "tools":[{"name":"t","input_schema":{},"cache_control":{"type":"ephemeral","ttl":"1h"}}],
      "messages":[{"role":"user","content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}]}]})")),
            kCacheTtlLongSeconds);
  EXPECT_EQ(anthropic_cache_ttl_seconds(OJson::parse(R"({"cache_control":{"type":"ephemeral","ttl":"1h"}})")),
            kCacheTtlLongSeconds);
}

TEST(CacheRetention, ABadTtlNamesItsField) {
  try {
    anthropic_cache_ttl_seconds(OJson::parse(
        R"({"messages":[{"role":"user","content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral","ttl":"2h"}}]}]})"));
    FAIL() << "expected a 400";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.http_status(), 400);
    EXPECT_NE(std::string(e.what()).find("messages.0.content.0.cache_control.ttl"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace llmesh::api
