// Point specs, scenario files, scaling, the results store's resume rule and
// the trace planner.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "bench/agent_sessions.h"
#include "bench/bench_run.h"
#include "bench/results_store.h"
#include "bench/scenario.h"
#include "bench/server_client.h"
#include "core/error.h"

namespace llmesh::bench {
namespace {

namespace fs = std::filesystem;

std::string temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("llmesh_bench_test_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(Scenario, QuickMapIsTheIssuesMatrix) {
  const std::vector<PointSpec> points = quick_map_points();
  std::vector<std::string> names;
  for (const PointSpec& p : points) names.push_back(p.name);
  const std::vector<std::string> expected = {"1K->1 C1",   "32K->1 C1",   "128K->1 C1", "32K->1 C16",
                                             "1K->1K C1",  "1K->1K C16",  "1K->1K C32", "1K->1K C64",
                                             "1K->4K C16", "128K->1K C1", "32K->1K C8"};
  EXPECT_EQ(names, expected);
  for (const PointSpec& p : points) EXPECT_GE(p.num_requests, p.concurrency) << p.name;
}

TEST(Scenario, ScaleShrinksLengthsAndCountsAndRenames) {
  PointSpec p = quick_map_points()[7];  // 1K->1K C64, 128 requests
  const PointSpec s = scaled(p, 0.25);
  EXPECT_EQ(s.isl, 256);
  EXPECT_EQ(s.osl, 256);
  EXPECT_EQ(s.num_requests, 64);  // 128 * 0.25 = 32, but never fewer than C
  EXPECT_EQ(s.concurrency, 64);   // concurrency is what the point measures: kept
  EXPECT_EQ(s.name, "256->256 C64");
  EXPECT_EQ(scaled(quick_map_points()[1], 0.25).num_requests, 2);  // 8 * 0.25
  EXPECT_NE(s.key(), p.key());
  const PointSpec tiny = scaled(quick_map_points()[0], 0.001);
  EXPECT_EQ(tiny.isl, 16);  // floor for prompts
  EXPECT_EQ(tiny.osl, 1);
  EXPECT_EQ(tiny.num_requests, 1);
  EXPECT_THROW(scaled(p, 0), Error);
}

TEST(Scenario, TomlAndTsvFiles) {
  const std::string dir = temp_dir("scenario");
  write(dir + "/s.toml",
        "[[point]]\nisl = 100\nosl = 8\nconcurrency = 2\nrequests = 4\n\n"
        "[[point]]\nkind = \"prefix_ab\"\nisl = 64\nrepetitions = 3\n\n"
        "[[point]]\nkind = \"sessions\"\nsessions = 2\nturns = 3\nsubagent_every_turns = 2\n");
  std::vector<PointSpec> points = load_scenario_file(dir + "/s.toml");
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].kind, "fixed");
  EXPECT_EQ(points[0].name, "100->8 C2");
  EXPECT_EQ(points[1].kind, "prefix_ab");
  EXPECT_EQ(points[2].num_turns, 3);
  EXPECT_EQ(points[2].subagent_every_turns, 2);

  write(dir + "/s.tsv", "name\tisl\tosl\tconcurrency\trequests\twarmups\ncustom\t512\t16\t4\t8\t1\n");
  points = load_scenario_file(dir + "/s.tsv");
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].name, "custom");
  EXPECT_EQ(points[0].isl, 512);
  EXPECT_EQ(points[0].num_warmups, 1);

  write(dir + "/bad.toml", "[[point]]\nisl = 100\nosll = 8\n");
  try {
    load_scenario_file(dir + "/bad.toml");
    FAIL() << "an unknown field must be rejected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("osll"), std::string::npos) << e.what();
  }
  write(dir + "/bad.tsv", "isl\tosl\n100\tx\n");
  EXPECT_THROW(load_scenario_file(dir + "/bad.tsv"), Error);
  fs::remove_all(dir);
}

TEST(Scenario, PlannedPointsAddWarmTwinsAndMeasureDuplicatesOnce) {
  BenchOptions options;
  options.modes = {"sanity", "prefix"};
  std::vector<PointSpec> points = planned_points(options);
  ASSERT_EQ(points.size(), 5u);
  EXPECT_EQ(points[4].kind, "prefix_ab");
  options.also_warm = true;
  points = planned_points(options);
  ASSERT_EQ(points.size(), 9u);
  EXPECT_EQ(points[1].name, "128->1 C1 warm");
  EXPECT_EQ(points[1].cache, "warm");
  EXPECT_NE(points[1].key(), points[0].key());
  // At a tiny scale 1K->1 C1 and 32K->1 C1 both become 16->1 C1 with one request: measured once.
  options = BenchOptions();
  options.scale = 0.0001;
  points = planned_points(options);
  EXPECT_LT(points.size(), quick_map_points().size());
  for (size_t i = 0; i < points.size(); ++i)
    for (size_t j = i + 1; j < points.size(); ++j) EXPECT_NE(points[i].key(), points[j].key());
}

TEST(PointSpec, JsonRoundTripKeepsTheKey) {
  for (PointSpec p : {quick_map_points()[5], mode_point("interference"), mode_point("prefix"), mode_point("needle"),
                      mode_point("sessions")}) {
    const PointSpec back = point_spec_from_json(to_json(p));
    EXPECT_EQ(back.key(), p.key());
    EXPECT_EQ(back.name, p.name);
  }
}

RequestRecord record(const std::string& key, int64_t index) {
  RequestRecord r;
  r.point_key = key;
  r.role = "measured";
  r.index = index;
  r.ok = true;
  r.send_s = static_cast<double>(index);
  r.end_s = 1;
  r.chunk_s = {0.5, 0.75};
  r.first_token_s = 0.5;
  return r;
}

TEST(ResultsStore, ResumeKeepsFinishedPointsAndDropsUnfinishedOnes) {
  const std::string dir = temp_dir("store");
  PointSpec done = quick_map_points()[0], cut = quick_map_points()[1];
  {
    ResultsStore store(dir);
    store.mark_point_start(done);
    store.append(record(done.key(), 0));
    store.append(record(done.key(), 1));
    store.mark_point_end(done, {{"notes", {"a note"}}});
    store.mark_point_start(cut);
    store.append(record(cut.key(), 0));
  }
  // Simulate a kill mid-write: a torn last line.
  { std::ofstream(dir + "/requests.jsonl", std::ios::app) << "{\"type\":\"requ"; }
  ResultsStore resumed(dir);
  EXPECT_TRUE(resumed.is_finished(done.key()));
  EXPECT_FALSE(resumed.is_finished(cut.key()));
  EXPECT_EQ(resumed.num_resumed_points(), 1u);
  StoredRun run = load_requests_file(dir + "/requests.jsonl");
  ASSERT_EQ(run.point_order.size(), 1u);
  const StoredPoint& p = run.points[done.key()];
  EXPECT_TRUE(p.finished);
  ASSERT_EQ(p.records.size(), 2u);
  EXPECT_EQ(p.records[1].chunk_s, (std::vector<double>{0.5, 0.75}));
  EXPECT_EQ(p.end_info["notes"][0], "a note");
  fs::remove_all(dir);
}

TEST(Trace, PlansSessionsInTurnOrderWithTheSharedPrefixCountedOnce) {
  const std::string dir = temp_dir("trace");
  write(dir + "/t.jsonl",
        "{\"session_id\": \"a\", \"turn\": 1, \"input_tokens\": 300, \"output_tokens\": 20, \"delay_s\": 0.5}\n"
        "{\"session_id\": \"a\", \"turn\": 0, \"input_tokens\": 1200, \"output_tokens\": 10, \"delay_s\": 0, "
        "\"shared_prefix_hash_ids\": [1, 2]}\n"
        "{\"session_id\": 7, \"turn\": 0, \"input_tokens\": 100, \"output_tokens\": 5}\n");
  const std::vector<TraceRow> rows = read_trace_file(dir + "/t.jsonl");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2].session_id, "7");
  const std::vector<SessionPlan> plans = plan_trace_sessions(rows, 512, 0.5);
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_EQ(plans[0].session_id, "a");
  EXPECT_EQ(plans[0].shared_block_tokens, 256);
  ASSERT_EQ(plans[0].turns.size(), 2u);
  EXPECT_EQ(plans[0].turns[0].append_tokens, 600 - 2 * 256);  // the prefix is the system prompt
  EXPECT_EQ(plans[0].turns[0].output_tokens, 5);
  EXPECT_EQ(plans[0].turns[1].append_tokens, 150);
  EXPECT_DOUBLE_EQ(plans[0].turns[1].delay_s, 0.5);
  write(dir + "/bad.jsonl", "{\"session_id\": \"a\", \"turn\": 0}\n");
  EXPECT_THROW(read_trace_file(dir + "/bad.jsonl"), Error);
  fs::remove_all(dir);
}

TEST(SseParser, SplitsEventsAcrossArbitraryChunks) {
  const std::string body = "data: {\"a\":1}\n\n: comment\nevent: x\ndata: {\"b\":2}\r\n\r\ndata: [DONE]\n\n";
  for (size_t step : {1u, 3u, 7u, 100u}) {
    SseParser parser;
    std::vector<std::string> payloads;
    for (size_t i = 0; i < body.size(); i += step)
      parser.feed(std::string_view(body).substr(i, step), [&](std::string_view p) { payloads.emplace_back(p); });
    EXPECT_EQ(payloads, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "[DONE]"})) << "step " << step;
  }
}

}  // namespace
}  // namespace llmesh::bench
