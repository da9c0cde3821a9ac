#include "api/session_key.h"

#include <gtest/gtest.h>

namespace llmesh::api {
namespace {

using nlohmann::json;

// Two Claude Code turns: same system (billing header differs per conversation),
// turn 2 repeats turn 1 with the cache_control marker moved to the last block.
json claude_code_turn(const std::string& billing, int num_turns, const std::string& user_id = "") {
  json body = {{"model", "claude-sonnet-4-5"},
               {"max_tokens", 32000},
               {"system",
                json::array({{{"type", "text"}, {"text", "x-anthropic-billing-header: cc_version=2.1; " + billing}},
                             {{"type", "text"}, {"text", "You are Claude Code."}, {"cache_control", {{"type", "ephemeral"}}}}})},
               {"messages", json::array()}};
  if (!user_id.empty()) body["metadata"] = {{"user_id", user_id}};
  for (int t = 0; t < num_turns; ++t) {
    body["messages"].push_back({{"role", "user"}, {"content", json::array({{{"type", "text"}, {"text", "turn " + std::to_string(t)}}})}});
    if (t + 1 < num_turns) body["messages"].push_back({{"role", "assistant"}, {"content", "ok " + std::to_string(t)}});
  }
  body["messages"].back()["content"][0]["cache_control"] = {{"type", "ephemeral"}};
  return body;
}

TEST(SessionKey, HeaderWinsOverEverything) {
  const json body = claude_code_turn("a", 1, "user_x_account_y_session_abc");
  const SessionKey k = session_key(body, PromptApi::anthropic_messages, "my-session");
  EXPECT_EQ(k.source, SessionKeySource::header);
  EXPECT_EQ(k.key, "my-session");
  EXPECT_NE(k.hash, 0u);
}

TEST(SessionKey, ClaudeCodeUserIdSessionPart) {
  EXPECT_EQ(session_id_from_user_id("user_5f1e_account_9a0b_session_3c2d-11"), "3c2d-11");
  EXPECT_EQ(session_id_from_user_id(R"({"device_id":"d","account_uuid":"","session_id":"s-42"})"), "s-42");
  EXPECT_EQ(session_id_from_user_id("plain-user"), "");
  EXPECT_EQ(session_id_from_user_id("user_session_"), "");

  const SessionKey a = session_key(claude_code_turn("a", 1, "user_h_account_u_session_S1"), PromptApi::anthropic_messages, "");
  EXPECT_EQ(a.source, SessionKeySource::anthropic_user_id);
  EXPECT_EQ(a.key, "S1");
  // Sub-agents of one session share the id: same key whatever the prompt.
  const SessionKey b = session_key(claude_code_turn("zz", 3, "user_h_account_u_session_S1"), PromptApi::anthropic_messages, "");
  EXPECT_EQ(a.hash, b.hash);
  // A user id without a session part is used whole.
  const SessionKey c = session_key(claude_code_turn("a", 1, "someone"), PromptApi::anthropic_messages, "");
  EXPECT_EQ(c.key, "someone");
}

TEST(SessionKey, ResponsesPromptCacheKey) {
  const json body = {{"model", "m"}, {"prompt_cache_key", "conv-7"}, {"input", "hi"}};
  const SessionKey k = session_key(body, PromptApi::responses, "");
  EXPECT_EQ(k.source, SessionKeySource::prompt_cache_key);
  EXPECT_EQ(k.key, "conv-7");
}

TEST(SessionKey, PromptFallbackIsStableAcrossTurns) {
  // No ids: the hash of system + first user turn, the same on turns 1..3 even
  // though cache_control moves and the billing header is per conversation.
  const SessionKey t1 = session_key(claude_code_turn("conv-a", 1), PromptApi::anthropic_messages, "");
  const SessionKey t3 = session_key(claude_code_turn("conv-a", 3), PromptApi::anthropic_messages, "");
  const SessionKey other_billing = session_key(claude_code_turn("conv-b", 2), PromptApi::anthropic_messages, "");
  EXPECT_EQ(t1.source, SessionKeySource::prompt_prefix);
  EXPECT_EQ(t1.key.size(), 16u);
  EXPECT_EQ(t1.hash, t3.hash);
  EXPECT_EQ(t1.hash, other_billing.hash);

  json chat1 = {{"messages", json::array({{{"role", "system"}, {"content", "be brief"}},
                                          {{"role", "user"}, {"content", "question one"}}})}};
  json chat2 = chat1;
  chat2["messages"].push_back({{"role", "assistant"}, {"content", "answer"}});
  chat2["messages"].push_back({{"role", "user"}, {"content", "question two"}});
  json other = chat1;
  other["messages"][1]["content"] = "a different question";
  const SessionKey c1 = session_key(chat1, PromptApi::chat_completions, "");
  EXPECT_EQ(c1.hash, session_key(chat2, PromptApi::chat_completions, "").hash);
  EXPECT_NE(c1.hash, session_key(other, PromptApi::chat_completions, "").hash);
}

TEST(SessionKey, PrefixBytesBoundTheHashedText) {
  json a = {{"messages", json::array({{{"role", "user"}, {"content", std::string(500, 'x') + "A"}}})}};
  json b = {{"messages", json::array({{{"role", "user"}, {"content", std::string(500, 'x') + "B"}}})}};
  EXPECT_EQ(session_key(a, PromptApi::chat_completions, "", 100).hash,
            session_key(b, PromptApi::chat_completions, "", 100).hash);
  EXPECT_NE(session_key(a, PromptApi::chat_completions, "").hash, session_key(b, PromptApi::chat_completions, "").hash);
}

TEST(SessionKey, ALongSharedSystemPromptDoesNotMergeSessions) {
  const std::string shared(5000, 's');  // longer than prefix_bytes
  json a = {{"messages", json::array({{{"role", "system"}, {"content", shared}}, {{"role", "user"}, {"content", "task A"}}})}};
  json b = {{"messages", json::array({{{"role", "system"}, {"content", shared}}, {{"role", "user"}, {"content", "task B"}}})}};
  EXPECT_NE(session_key(a, PromptApi::chat_completions, "", 1000).hash,
            session_key(b, PromptApi::chat_completions, "", 1000).hash);
}

TEST(SessionKey, NoPromptNoSession) {
  EXPECT_EQ(session_key(json(), PromptApi::chat_completions, "").source, SessionKeySource::none);
  EXPECT_EQ(session_key(json::object(), PromptApi::anthropic_messages, "").source, SessionKeySource::none);
  // Wrongly typed fields are skipped, never thrown on.
  const json odd = {{"metadata", "not an object"}, {"prompt_cache_key", 5}, {"messages", "not an array"}};
  EXPECT_NO_THROW(session_key(odd, PromptApi::anthropic_messages, ""));
}

TEST(PromptPrefixText, TurnNIsAPrefixOfTurnNPlusOne) {
  for (PromptApi api : {PromptApi::anthropic_messages, PromptApi::chat_completions}) {
    const std::string t2 = prompt_prefix_text(claude_code_turn("x", 2), api);
    const std::string t3 = prompt_prefix_text(claude_code_turn("y", 3), api);
    ASSERT_FALSE(t2.empty());
    EXPECT_EQ(t3.compare(0, t2.size(), t2), 0) << t2 << "\n---\n" << t3;
  }
  EXPECT_EQ(prompt_prefix_text(claude_code_turn("x", 2), PromptApi::anthropic_messages).find("billing"), std::string::npos);
  EXPECT_EQ(prompt_prefix_text(claude_code_turn("x", 2), PromptApi::anthropic_messages).find("cache_control"),
            std::string::npos);
}

TEST(PromptPrefixText, PathsMapToApis) {
  PromptApi api{};
  EXPECT_TRUE(prompt_api_for_path("/v1/messages/count_tokens", &api));
  EXPECT_EQ(api, PromptApi::anthropic_messages);
  EXPECT_TRUE(prompt_api_for_path("/v1/responses", &api));
  EXPECT_EQ(api, PromptApi::responses);
  EXPECT_FALSE(prompt_api_for_path("/v1/models", &api));
}

}  // namespace
}  // namespace llmesh::api
