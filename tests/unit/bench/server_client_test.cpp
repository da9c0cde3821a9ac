// ServerClient against a canned in-process HTTP server: OpenAI and Anthropic
// streams, usage and cached tokens, and every kind of failure recorded (not
// thrown, not dropped).
#include "bench/server_client.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>

namespace llmesh::bench {
namespace {

class CannedServer {
 public:
  CannedServer() {
    server_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
      last_body_ = nlohmann::json::parse(req.body);
      const std::string mode = last_body_["messages"][0]["content"];
      if (mode == "500") {
        res.status = 500;
        res.set_content(R"({"error":{"message":"engine exploded"}})", "application/json");
        return;
      }
      std::string body = "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n";
      body += "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n";
      body += "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"lo\"}}]}\n\n";
      if (mode == "error_event") {
        body += "data: {\"error\":{\"message\":\"out of blocks\"}}\n\ndata: [DONE]\n\n";
      } else if (mode != "truncated") {
        body += "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\n";
        body +=
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,"
            "\"prompt_tokens_details\":{\"cached_tokens\":8}}}\n\ndata: [DONE]\n\n";
      }
      res.set_content(body, "text/event-stream");
    });
    server_.Post("/v1/messages", [this](const httplib::Request& req, httplib::Response& res) {
      last_body_ = nlohmann::json::parse(req.body);
      std::string body =
          "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":4,"
          "\"cache_read_input_tokens\":16,\"output_tokens\":0}}}\n\n"
          "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
          "\"text_delta\",\"text\":\"Hi\"}}\n\n"
          "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},"
          "\"usage\":{\"output_tokens\":2}}\n\n"
          "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
      res.set_content(body, "text/event-stream");
    });
    server_.Post("/flush_cache",
                 [](const httplib::Request&, httplib::Response& res) { res.set_content("{}", "application/json"); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~CannedServer() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  nlohmann::json last_body_;

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

RequestRecord generate(CannedServer& server, const std::string& content, ApiKind api = ApiKind::openai_chat) {
  ServerClient client(ClientOptions{server.url(), "m", api, "", 10, true});
  RequestRecord r;
  client.generate(GenerationRequest{nlohmann::json::array({{{"role", "user"}, {"content", content}}}), 3, true, true},
                  r, Clock::now());
  return r;
}

TEST(ServerClient, OpenAiStreamTimesUsageAndRequestFields) {
  CannedServer server;
  const RequestRecord r = generate(server, "ok");
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.http_status, 200);
  EXPECT_EQ(r.chunk_s.size(), 2u);  // the role-only chunk carries no text
  EXPECT_EQ(r.first_token_s, r.chunk_s[0]);
  EXPECT_GE(r.end_s, r.first_token_s);
  EXPECT_EQ(r.prompt_tokens, 12);
  EXPECT_EQ(r.completion_tokens, 3);
  EXPECT_EQ(r.cached_tokens, 8);
  EXPECT_EQ(r.expected_output_tokens, 3);
  EXPECT_EQ(r.finish_reason, "length");
  EXPECT_EQ(r.text, "Hel");
  EXPECT_EQ(server.last_body_["ignore_eos"], true);
  EXPECT_EQ(server.last_body_["min_tokens"], 3);
  EXPECT_EQ(server.last_body_["stream_options"]["include_usage"], true);
}

TEST(ServerClient, FailuresAreRecordedWithTheirReason) {
  CannedServer server;
  RequestRecord r = generate(server, "500");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.http_status, 500);
  EXPECT_NE(r.error.find("engine exploded"), std::string::npos) << r.error;
  r = generate(server, "error_event");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("out of blocks"), std::string::npos) << r.error;
  r = generate(server, "truncated");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("without a finish"), std::string::npos) << r.error;
  ServerClient dead(ClientOptions{"http://127.0.0.1:1", "m", ApiKind::openai_chat, "", 2, true});
  RequestRecord d;
  dead.generate(GenerationRequest{nlohmann::json::array(), 1, true, false}, d, Clock::now());
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.http_status, 0);
  EXPECT_NE(d.error.find("HTTP"), std::string::npos);
}

TEST(ServerClient, AnthropicStreamCountsCachedInputAsPromptTokens) {
  CannedServer server;
  const RequestRecord r = generate(server, "ok", ApiKind::anthropic_messages);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.prompt_tokens, 20);  // input 4 + cache read 16
  EXPECT_EQ(r.cached_tokens, 16);
  EXPECT_EQ(r.completion_tokens, 2);
  EXPECT_EQ(r.chunk_s.size(), 1u);
  EXPECT_EQ(r.finish_reason, "max_tokens");
  EXPECT_EQ(server.last_body_["max_tokens"], 3);
  EXPECT_FALSE(server.last_body_.contains("stream_options"));
}

TEST(ServerClient, WithoutExactOutputFieldsTheLengthIsStillChecked) {
  CannedServer server;
  ServerClient client(ClientOptions{server.url(), "m", ApiKind::openai_chat, "", 10, /*exact_output=*/false});
  RequestRecord r;
  client.generate(GenerationRequest{nlohmann::json::array({{{"role", "user"}, {"content", "ok"}}}), 5, true, false}, r,
                  Clock::now());
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_FALSE(server.last_body_.contains("ignore_eos"));
  EXPECT_FALSE(server.last_body_.contains("min_tokens"));
  EXPECT_EQ(r.expected_output_tokens, 5);  // the canned stream's 3 tokens will show as a difference
  EXPECT_EQ(r.completion_tokens, 3);
}

TEST(ServerClient, FlushAndContextLimit) {
  CannedServer server;
  ServerClient client(ClientOptions{server.url(), "m", ApiKind::openai_chat, "", 5, true});
  EXPECT_EQ(client.flush_prefix_cache(), "/flush_cache");
  EXPECT_EQ(ServerClient::context_limit(nlohmann::json::parse(R"({"data":[{"id":"x","max_model_len":4096}]})")), 4096);
  EXPECT_EQ(ServerClient::context_limit(nlohmann::json::parse(R"({"data":[{"id":"x","meta":{"n_ctx_train":8192}}]})")),
            8192);
  EXPECT_EQ(ServerClient::context_limit(nlohmann::json()), -1);
}

}  // namespace
}  // namespace llmesh::bench
