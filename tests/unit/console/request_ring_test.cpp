// The console's request ring and metrics history (docs/console.md).
#include "console/request_ring.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "console/metrics_history.h"

namespace llmesh::console {
namespace {

RequestRecord record(const std::string& id, double finished_at, std::optional<double> ttft) {
  RequestRecord r;
  r.id = id;
  r.protocol = "chat";
  r.arrived_at = finished_at - 1.0;
  r.finished_at = finished_at;
  r.ttft_s = ttft;
  r.num_prompt_tokens = 10;
  r.timeline.push_back({{"phase", "done"}, {"start_s", 1.0}, {"end_s", 1.0}});
  return r;
}

TEST(RequestRing, KeepsTheLastCapacityRecordsMostRecentFirst) {
  RequestRing ring(3);
  for (int i = 0; i < 5; ++i) ring.add(record("r" + std::to_string(i), 100.0 + i, 0.1));
  const auto view = ring.list(10);
  EXPECT_EQ(view["capacity"], 3);
  EXPECT_EQ(view["num_recorded"], 5);
  ASSERT_EQ(view["requests"].size(), 3u);
  EXPECT_EQ(view["requests"][0]["id"], "r4");
  EXPECT_EQ(view["requests"][2]["id"], "r2");
  EXPECT_FALSE(view["requests"][0].contains("timeline"));  // the list stays small
  EXPECT_DOUBLE_EQ(view["requests"][0]["duration_s"].get<double>(), 1.0);
  EXPECT_EQ(ring.list(1)["requests"].size(), 1u);

  EXPECT_FALSE(ring.find("r1"));  // dropped
  const auto one = ring.find("r3");
  ASSERT_TRUE(one);
  EXPECT_EQ((*one)["timeline"][0]["phase"], "done");
  EXPECT_TRUE((*one)["session"].is_null());  // no session key
}

TEST(RequestRing, TtftQuantilesOverTheRecentWindow) {
  RequestRing ring(100);
  ring.add(record("old", 10.0, 9.0));  // outside the window
  for (int i = 1; i <= 20; ++i) ring.add(record("r" + std::to_string(i), 100.0 + i, 0.01 * i));
  ring.add(record("no-token", 130.0, std::nullopt));
  const TtftQuantiles q = ring.ttft_since(50.0);
  ASSERT_TRUE(q.p50 && q.p95);
  EXPECT_DOUBLE_EQ(*q.p50, 0.10);
  EXPECT_DOUBLE_EQ(*q.p95, 0.19);
  EXPECT_FALSE(ring.ttft_since(200.0).p50);
}

TEST(MetricsHistory, SamplesEveryIntervalKeepsTheWindowAndAnswersSince) {
  std::atomic<int> calls{0};
  MetricsHistory history([&] { return nlohmann::json{{"n", ++calls}}; }, 10, 5);
  while (calls.load() < 12) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  history.stop();
  const auto all = history.since(0);
  ASSERT_EQ(all["samples"].size(), 5u);  // the window
  EXPECT_EQ(all["window_s"].get<double>(), 0.05);
  const auto& samples = all["samples"];
  for (size_t i = 1; i < samples.size(); ++i) {
    EXPECT_EQ(samples[i]["n"].get<int>(), samples[i - 1]["n"].get<int>() + 1);
    EXPECT_GE(samples[i]["t_ms"].get<int64_t>(), samples[i - 1]["t_ms"].get<int64_t>());
  }
  const int64_t cut = samples[2]["t_ms"].get<int64_t>();
  for (const auto& s : history.since(cut)["samples"]) EXPECT_GT(s["t_ms"].get<int64_t>(), cut);
}

TEST(MetricsHistory, ANullSampleIsSkippedAndAThrowingSamplerDoesNotStopIt) {
  std::atomic<int> calls{0};
  MetricsHistory history(
      [&]() -> nlohmann::json {
        const int n = ++calls;
        if (n == 1) return nullptr;
        if (n == 2) throw std::runtime_error("boom");
        return {{"n", n}};
      },
      5, 100);
  while (calls.load() < 6) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  history.stop();
  const auto samples = history.since(0)["samples"];
  ASSERT_GE(samples.size(), 4u);
  EXPECT_EQ(samples[0]["n"], 3);
}

}  // namespace
}  // namespace llmesh::console
