#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "core/error.h"
#include "route/response_observer.h"
#include "route/route_config.h"
#include "route/upstream_spec.h"

namespace llmesh::route {
namespace {

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(UpstreamSpec, ParsesTheFlag) {
  const UpstreamSpec u =
      parse_upstream_flag("http://10.0.0.2:8081/v1/,name=box2,weight=2.5,max_concurrent=8,kind=vllm,api_key=k,models=a|b");
  EXPECT_EQ(u.url, "http://10.0.0.2:8081");
  EXPECT_EQ(u.host, "10.0.0.2");
  EXPECT_EQ(u.port, 8081);
  EXPECT_EQ(u.name, "box2");
  EXPECT_DOUBLE_EQ(u.weight, 2.5);
  EXPECT_EQ(u.max_concurrent, 8);
  EXPECT_EQ(u.kind, UpstreamKind::openai);
  EXPECT_EQ(u.api_key, "k");
  EXPECT_EQ(u.models, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(parse_upstream_flag("http://localhost:9000").name, "localhost:9000");
  EXPECT_EQ(parse_upstream_flag("http://gpu-box").port, 80);
}

TEST(UpstreamSpec, ErrorsNameTheValueAndTheKey) {
  EXPECT_NE(error_of([] { parse_upstream_flag("http://h:1,weight=0"); }).find("weight=0"), std::string::npos);
  EXPECT_NE(error_of([] { parse_upstream_flag("http://h:1,weight=abc"); }).find("weight=abc"), std::string::npos);
  EXPECT_NE(error_of([] { parse_upstream_flag("http://h:1,colour=red"); }).find("unknown key 'colour'"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_upstream_flag("http://h:99999"); }).find("port '99999'"), std::string::npos);
  EXPECT_NE(error_of([] { parse_upstream_flag("https://h:1"); }).find("https"), std::string::npos);
  EXPECT_NE(error_of([] { parse_upstream_flag("h:1"); }).find("http://host:port"), std::string::npos);
  EXPECT_NE(error_of([] { parse_upstream_flag("http://h:1,kind=tgi"); }).find("kind=tgi"), std::string::npos);
  EXPECT_NE(error_of([] { check_upstream_specs({parse_upstream_flag("http://a:1,name=x"),
                                                parse_upstream_flag("http://b:1,name=x")}); })
                .find("'x'"),
            std::string::npos);
}

TEST(RouteConfig, ReadsTomlAndRejectsUnknownKeys) {
  const std::string path = ::testing::TempDir() + "/route_test.toml";
  {
    std::ofstream f(path);
    f << "[server]\nport = 9000\n[policy]\nname = \"cache_aware\"\nload_factor = 1.5\n"
         "[health]\ninterval_ms = 250\n[[upstream]]\nurl = \"http://127.0.0.1:8081\"\nname = \"a\"\nweight = 2\n"
         "[[upstream]]\nurl = \"http://127.0.0.1:8082\"\nkind = \"openai\"\nmodels = [\"m\"]\n";
  }
  RouteConfig c;
  load_route_config(path, c);
  check_route_config(c);
  EXPECT_EQ(c.port, 9000);
  EXPECT_EQ(c.policy, "cache_aware");
  EXPECT_DOUBLE_EQ(c.policy_options.load_factor, 1.5);
  EXPECT_EQ(c.health.interval_ms, 250);
  ASSERT_EQ(c.upstreams.size(), 2u);
  EXPECT_EQ(c.upstreams[0].name, "a");
  EXPECT_DOUBLE_EQ(c.upstreams[0].weight, 2);
  EXPECT_EQ(c.upstreams[1].kind, UpstreamKind::openai);
  {
    std::ofstream f(path);
    f << "[policy]\nload_factr = 1.5\n";
  }
  RouteConfig bad;
  EXPECT_NE(error_of([&] { load_route_config(path, bad); }).find("unknown key 'load_factr'"), std::string::npos);
  std::remove(path.c_str());
}

TEST(ResponseObserver, OpenAiStreamUsageAndFirstToken) {
  ResponseObserver o(true);
  o.feed("data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n", 0.001);
  EXPECT_LT(o.first_output_s(), 0);  // a role-only chunk is not output
  o.feed("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel", 0.010);  // split mid-event
  EXPECT_FALSE(o.at_event_boundary());
  o.feed("lo\"}}]}\n\n", 0.011);
  EXPECT_DOUBLE_EQ(o.first_output_s(), 0.011);
  EXPECT_TRUE(o.at_event_boundary());
  o.feed("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":5,"
         "\"prompt_tokens_details\":{\"cached_tokens\":32}}}\n\ndata: [DONE]\n\n",
         0.05);
  EXPECT_EQ(o.usage().prompt_tokens, 40);
  EXPECT_EQ(o.usage().cached_tokens, 32);
  EXPECT_EQ(o.usage().output_tokens, 5);
  EXPECT_EQ(o.error(), "");
}

TEST(ResponseObserver, AnthropicStreamCountsCachedInput) {
  ResponseObserver o(true);
  o.feed("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":8,"
         "\"cache_read_input_tokens\":32,\"cache_creation_input_tokens\":0,\"output_tokens\":0}}}\n\n",
         0.001);
  o.feed("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
         "\"text_delta\",\"text\":\"hi\"}}\n\n",
         0.02);
  o.feed("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},"
         "\"usage\":{\"input_tokens\":8,\"output_tokens\":3}}\n\n",
         0.03);
  EXPECT_DOUBLE_EQ(o.first_output_s(), 0.02);
  EXPECT_EQ(o.usage().prompt_tokens, 40);
  EXPECT_EQ(o.usage().cached_tokens, 32);
  EXPECT_EQ(o.usage().output_tokens, 3);
}

TEST(ResponseObserver, JsonBodyAndErrors) {
  ResponseObserver o(false);
  o.feed("{\"usage\":{\"input_tokens\":10,\"output_tokens\":2,\"input_tokens_details\":{\"cached_tokens\":4}}}", 0.5);
  o.finish(0.5);
  EXPECT_EQ(o.usage().prompt_tokens, 10);
  EXPECT_EQ(o.usage().cached_tokens, 4);
  ResponseObserver e(false);
  e.feed("{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"busy\"}}", 0.1);
  e.finish(0.1);
  EXPECT_EQ(e.error(), "busy");
}

}  // namespace
}  // namespace llmesh::route
