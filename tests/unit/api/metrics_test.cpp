#include "api/metrics.h"

#include <gtest/gtest.h>

namespace llmesh::api {

using engine::EngineStats;

namespace {

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

TEST(Histogram, BucketsAreCumulative) {
  Histogram h({0.1, 1.0});
  h.observe(0.05);
  h.observe(0.5);
  h.observe(0.5);
  h.observe(3.0);
  std::string out;
  h.render(out, "x", "help", "a=\"b\"");
  EXPECT_TRUE(contains(out, "x_bucket{a=\"b\",le=\"0.1\"} 1\n")) << out;
  EXPECT_TRUE(contains(out, "x_bucket{a=\"b\",le=\"1\"} 3\n")) << out;
  EXPECT_TRUE(contains(out, "x_bucket{a=\"b\",le=\"+Inf\"} 4\n")) << out;
  EXPECT_TRUE(contains(out, "x_count{a=\"b\"} 4\n")) << out;
  EXPECT_TRUE(contains(out, "x_sum{a=\"b\"} 4.05\n")) << out;
  EXPECT_TRUE(contains(out, "# TYPE x histogram\n"));
}

TEST(ServerMetrics, RendersEngineStatsAndHistograms) {
  ServerMetrics m;
  m.observe_request(0.2, 1.2, 11, true);  // TPOT = (1.2-0.2)/10 = 0.1
  EngineStats s;
  s.num_running = 3;
  s.num_waiting = 2;
  s.num_blocks_total = 100;
  s.num_blocks_used = 25;
  s.prefix_queried_tokens = 64;
  s.prefix_hit_tokens = 32;
  s.prompt_tokens = 500;
  s.generation_tokens = 70;
  const std::string out = m.render(s, "tiny");
  EXPECT_TRUE(contains(out, "llmesh:num_requests_running{model_name=\"tiny\"} 3\n")) << out;
  EXPECT_TRUE(contains(out, "llmesh:num_requests_waiting{model_name=\"tiny\"} 2\n"));
  EXPECT_TRUE(contains(out, "llmesh:kv_cache_blocks_total{model_name=\"tiny\"} 100\n"));
  EXPECT_TRUE(contains(out, "llmesh:kv_cache_blocks_used{model_name=\"tiny\"} 25\n"));
  EXPECT_TRUE(contains(out, "llmesh:kv_cache_usage_perc{model_name=\"tiny\"} 0.25\n"));
  EXPECT_TRUE(contains(out, "llmesh:prefix_cache_queries_total{model_name=\"tiny\"} 64\n"));
  EXPECT_TRUE(contains(out, "llmesh:prefix_cache_hits_total{model_name=\"tiny\"} 32\n"));
  EXPECT_TRUE(contains(out, "llmesh:prompt_tokens_total{model_name=\"tiny\"} 500\n"));
  EXPECT_TRUE(contains(out, "llmesh:generation_tokens_total{model_name=\"tiny\"} 70\n"));
  EXPECT_TRUE(contains(out, "llmesh:time_to_first_token_seconds_bucket{model_name=\"tiny\",le=\"0.25\"} 1\n"));
  EXPECT_TRUE(contains(out, "llmesh:time_to_first_token_seconds_bucket{model_name=\"tiny\",le=\"0.1\"} 0\n"));
  EXPECT_TRUE(contains(out, "llmesh:time_per_output_token_seconds_bucket{model_name=\"tiny\",le=\"0.1\"} 1\n"));
  EXPECT_TRUE(contains(out, "llmesh:time_per_output_token_seconds_bucket{model_name=\"tiny\",le=\"0.075\"} 0\n"));
  EXPECT_TRUE(contains(out, "llmesh:e2e_request_latency_seconds_count{model_name=\"tiny\"} 1\n"));
}

}  // namespace
}  // namespace llmesh::api
