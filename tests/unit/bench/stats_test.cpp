// Statistics on synthetic timelines with expected values computed by hand.
#include "bench/stats.h"

#include <gtest/gtest.h>

#include <cmath>

namespace llmesh::bench {
namespace {

TEST(Percentile, LinearInterpolationBetweenClosestRanks) {
  // Sorted: 10 20 30 40 50 (n = 5). p50: r = 2 -> 30. p95: r = 3.8 -> 40 + 0.8*10 = 48.
  // p99: r = 3.96 -> 49.6. p0 -> 10, p100 -> 50. p25: r = 1 -> 20. p10: r = 0.4 -> 14.
  const std::vector<double> v = {50, 10, 40, 20, 30};
  EXPECT_DOUBLE_EQ(percentile(v, 50), 30);
  EXPECT_DOUBLE_EQ(percentile(v, 95), 48);
  EXPECT_NEAR(percentile(v, 99), 49.6, 1e-9);
  EXPECT_DOUBLE_EQ(percentile(v, 0), 10);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 50);
  EXPECT_DOUBLE_EQ(percentile(v, 25), 20);
  EXPECT_NEAR(percentile(v, 10), 14, 1e-9);
}

TEST(Percentile, EvenCountAndSingleValueAndEmpty) {
  // 1 2 3 4: p50 r = 1.5 -> 2.5; p95 r = 2.85 -> 3.85.
  EXPECT_DOUBLE_EQ(percentile({4, 3, 2, 1}, 50), 2.5);
  EXPECT_NEAR(percentile({4, 3, 2, 1}, 95), 3.85, 1e-12);
  EXPECT_DOUBLE_EQ(percentile({7}, 99), 7);
  EXPECT_TRUE(std::isnan(percentile({}, 50)));
}

TEST(Distribution, IgnoresNaNAndComputesMean) {
  const std::vector<double> v = {1, NAN, 3, 2};
  const Distribution d = distribution_of(v);
  EXPECT_EQ(d.count, 3);
  EXPECT_DOUBLE_EQ(d.mean, 2);
  EXPECT_DOUBLE_EQ(d.p50, 2);
  EXPECT_NEAR(d.p95, 2.9, 1e-12);  // r = 1.9 -> 2 + 0.9
  const Distribution empty = distribution_of(std::vector<double>{});
  EXPECT_EQ(empty.count, 0);
  EXPECT_TRUE(to_json(empty)["p50"].is_null());
}

RequestRecord timeline(double send_s, std::vector<double> chunks, double end_s, int64_t prompt, int64_t output) {
  RequestRecord r;
  r.ok = true;
  r.send_s = send_s;
  r.chunk_s = chunks;
  r.first_token_s = chunks.empty() ? -1 : chunks.front();
  r.end_s = end_s;
  r.prompt_tokens = prompt;
  r.completion_tokens = output;
  return r;
}

TEST(RequestLatency, TtftTpotItlE2e) {
  // Sent at 0; chunks at 0.5, 0.6, 0.8, 1.1 s; done at 1.2 s; 5 output tokens
  // (one chunk held two tokens). TTFT 500 ms; TPOT (1200-500)/(5-1) = 175 ms;
  // ITL 100, 200, 300 ms; E2E 1200 ms.
  const RequestRecord r = timeline(0, {0.5, 0.6, 0.8, 1.1}, 1.2, 100, 5);
  EXPECT_DOUBLE_EQ(ttft_ms(r), 500);
  EXPECT_NEAR(tpot_ms(r), 175, 1e-9);
  const std::vector<double> itl = itl_ms(r);
  ASSERT_EQ(itl.size(), 3u);
  EXPECT_NEAR(itl[0], 100, 1e-9);
  EXPECT_NEAR(itl[1], 200, 1e-9);
  EXPECT_NEAR(itl[2], 300, 1e-9);
  EXPECT_NEAR(e2e_ms(r), 1200, 1e-9);
}

TEST(RequestLatency, OneOutputTokenHasNoTpot) {
  const RequestRecord r = timeline(0, {0.3}, 0.31, 100, 1);
  EXPECT_TRUE(std::isnan(tpot_ms(r)));
  EXPECT_TRUE(itl_ms(r).empty());
}

TEST(LoadMetrics, ThroughputOverTheWindowAndPooledItl) {
  // A: sent 0, chunks 1.0 1.5 2.0, ends 2.0, 10 in / 3 out.
  // B: sent 1, chunks 1.5 (abs 2.5) 2.5 (abs 3.5), ends 3.0 (abs 4.0), 20 in / 2 out.
  // C: failed. Window 0 -> 4 s: 2 ok / 4 = 0.5 req/s; in 30/4 = 7.5; out 5/4 = 1.25; total 8.75.
  // TTFT 1000, 1500 -> mean 1250. TPOT A (2000-1000)/2 = 500, B (3000-1500)/1 = 1500.
  // ITL pooled: A 500, 500; B 1000 -> p50 500, mean 666.67.
  std::vector<RequestRecord> records = {timeline(0, {1.0, 1.5, 2.0}, 2.0, 10, 3), timeline(1, {1.5, 2.5}, 3.0, 20, 2)};
  RequestRecord failed;
  failed.ok = false;
  failed.send_s = 0.2;
  failed.end_s = 9;
  records.push_back(failed);
  const LoadMetrics m = load_metrics(records);
  EXPECT_EQ(m.num_requests, 3);
  EXPECT_EQ(m.num_ok, 2);
  EXPECT_EQ(m.num_failed, 1);
  EXPECT_DOUBLE_EQ(m.duration_s, 4);
  EXPECT_DOUBLE_EQ(m.request_per_s, 0.5);
  EXPECT_DOUBLE_EQ(m.input_tokens_per_s, 7.5);
  EXPECT_DOUBLE_EQ(m.output_tokens_per_s, 1.25);
  EXPECT_DOUBLE_EQ(m.total_tokens_per_s, 8.75);
  EXPECT_DOUBLE_EQ(m.ttft_ms.mean, 1250);
  EXPECT_DOUBLE_EQ(m.tpot_ms.p50, 1000);
  EXPECT_EQ(m.itl_ms.count, 3);
  EXPECT_NEAR(m.itl_ms.mean, 2000.0 / 3, 1e-9);
  EXPECT_NEAR(m.itl_ms.p50, 500, 1e-9);
  EXPECT_NEAR(m.e2e_ms.p99, 2000 + 0.99 * 1000, 1e-9);
}

}  // namespace
}  // namespace llmesh::bench
