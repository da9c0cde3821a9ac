// Analysis and report files built from synthetic raw records.
#include "bench/report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/analysis.h"
#include "bench/results_store.h"
#include "bench/scenario.h"

namespace llmesh::bench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

RequestRecord measured(const PointSpec& spec, int64_t index, int64_t prompt, int64_t output, int64_t cached) {
  RequestRecord r;
  r.point_key = spec.key();
  r.role = "measured";
  r.index = index;
  r.ok = true;
  r.send_s = static_cast<double>(index);
  r.first_token_s = 0.1;
  r.chunk_s = {0.1, 0.2};
  r.end_s = 0.3;
  r.expected_prompt_tokens = spec.isl;
  r.expected_output_tokens = spec.osl;
  r.prompt_tokens = prompt;
  r.completion_tokens = output;
  r.cached_tokens = cached;
  return r;
}

StoredPoint point_of(const PointSpec& spec, std::vector<RequestRecord> records) {
  StoredPoint p;
  p.spec = spec;
  p.finished = true;
  p.records = std::move(records);
  return p;
}

TEST(Analysis, ExactLengthsAndColdAreVerified) {
  PointSpec spec = scaled(quick_map_points()[4], 0.125);  // 128->128 C1
  ASSERT_EQ(spec.isl, 128);
  const json good = analyze_point(point_of(spec, {measured(spec, 0, 128, 128, 0), measured(spec, 1, 128, 128, 0)}));
  EXPECT_TRUE(good["valid"].get<bool>()) << good.dump();
  const json longer = analyze_point(point_of(spec, {measured(spec, 0, 129, 128, 0)}));
  EXPECT_FALSE(longer["valid"].get<bool>());
  EXPECT_NE(longer["invalid_reasons"].dump().find("129 instead of 128"), std::string::npos) << longer.dump();
  const json shorter_output = analyze_point(point_of(spec, {measured(spec, 0, 128, 100, 0)}));
  EXPECT_FALSE(shorter_output["valid"].get<bool>());
  const json cached = analyze_point(point_of(spec, {measured(spec, 0, 128, 128, 64)}));
  EXPECT_FALSE(cached["valid"].get<bool>());
  EXPECT_NE(cached["invalid_reasons"].dump().find("cached"), std::string::npos);
  RequestRecord failed = measured(spec, 1, -1, -1, -1);
  failed.ok = false;
  failed.error = "HTTP 500: boom";
  const json with_failure = analyze_point(point_of(spec, {measured(spec, 0, 128, 128, 0), failed}));
  EXPECT_FALSE(with_failure["valid"].get<bool>());
  EXPECT_EQ(with_failure["metrics"]["num_failed"], 1);
  EXPECT_NE(with_failure["invalid_reasons"].dump().find("boom"), std::string::npos);
}

TEST(Analysis, InterferenceWithoutOverlapSaysSo) {
  PointSpec spec = scaled(mode_point("interference"), 0.01);
  auto rec = [&](const std::string& role, double send_s, double end_s) {
    RequestRecord r = measured(spec, 0, -1, -1, 0);
    r.role = role;
    r.expected_prompt_tokens = r.expected_output_tokens = -1;
    r.send_s = send_s;
    r.end_s = end_s;
    return r;
  };
  StoredPoint p =
      point_of(spec, {rec("background_alone", 0, 1), rec("background_mixed", 10, 1), rec("injected", 15, 2)});
  json r = analyze_point(p);
  EXPECT_EQ(r["interference"]["status"], "BACKGROUND_FINISHED_BEFORE_INJECTION");
  EXPECT_TRUE(r["interference"]["output_tokens_per_s_change"].is_null());
  p.records[2].send_s = 10.5;  // injected while the background ran
  r = analyze_point(p);
  EXPECT_EQ(r["interference"]["status"], "OVERLAPPED");
  EXPECT_NEAR(r["interference"]["injected_ttft_ms"].get<double>(), 100, 1e-9);
}

TEST(Analysis, SessionReuseIsAgainstThePreviousPrompt) {
  PointSpec spec = mode_point("sessions");
  auto turn = [&](const std::string& session, int64_t t, int64_t prompt, int64_t cached, int64_t previous) {
    RequestRecord r = measured(spec, t, prompt, 10, cached);
    r.role = "session";
    r.session_id = session;
    r.turn = t;
    r.expected_prompt_tokens = -1;
    r.expected_output_tokens = 10;
    r.previous_prompt_tokens = previous;
    return r;
  };
  // Turn 1: s0 reuses 960 of its previous 1000-token prompt (0.96), s1 reuses 500 of 1000 (0.5).
  // The whole-prompt share would be 960/3000 -- not what is reported.
  const json r = analyze_point(point_of(spec, {turn("s0", 0, 1000, 0, -1), turn("s1", 0, 1000, 0, -1),
                                               turn("s0", 1, 3000, 960, 1000), turn("s1", 1, 3000, 500, 1000)}));
  ASSERT_EQ(r["turns"].size(), 2u);
  EXPECT_TRUE(r["turns"][0]["reuse_mean"].is_null());
  EXPECT_NEAR(r["turns"][1]["reuse_mean"].get<double>(), 0.73, 1e-12);
  EXPECT_NEAR(r["turns"][1]["cached_tokens_mean"].get<double>(), 730, 1e-12);
  EXPECT_NEAR(r["reuse_mean"].get<double>(), 0.73, 1e-12);
}

TEST(Reports, FilesAreWrittenAndParse) {
  const fs::path dir = fs::temp_directory_path() / ("llmesh_bench_report_" + std::to_string(getpid()));
  fs::remove_all(dir);
  PointSpec a = scaled(quick_map_points()[4], 0.125), b = scaled(quick_map_points()[5], 0.125),
            skipped = quick_map_points()[2];
  {
    ResultsStore store(dir.string());
    for (const PointSpec* s : {&a, &b}) {
      store.mark_point_start(*s);
      for (int i = 0; i < 3; ++i) store.append(measured(*s, i, s->isl, s->osl, 0));
      store.mark_point_end(*s, json::object());
    }
    store.mark_point_start(skipped);
    store.mark_point_end(skipped, {{"skipped", "ISL 131072 + OSL 1 exceeds the server's context of 40960 tokens"}});
  }
  const std::vector<json> results = write_reports(dir.string());
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0]["valid"].get<bool>());
  EXPECT_NE(results[2]["skipped"].get<std::string>().find("exceeds"), std::string::npos);

  std::ifstream jsonl(dir / "summary.jsonl");
  int lines = 0;
  for (std::string line; std::getline(jsonl, line); ++lines) EXPECT_TRUE(json::parse(line).is_object());
  EXPECT_EQ(lines, 3);

  std::ifstream csv(dir / "summary.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header.rfind("kind,name,isl,osl,concurrency", 0), 0u);
  std::string row;
  std::getline(csv, row);
  EXPECT_NE(row.find("\"128->128 C1\""), std::string::npos) << row;

  std::stringstream md, html;
  md << std::ifstream(dir / "report.md").rdbuf();
  html << std::ifstream(dir / "report.html").rdbuf();
  EXPECT_NE(md.str().find("| 128->128 C1 |"), std::string::npos);
  EXPECT_NE(md.str().find("TPOT"), std::string::npos);  // definitions are in every report
  EXPECT_NE(md.str().find("skipped"), std::string::npos);
  EXPECT_NE(html.str().find("<svg"), std::string::npos);
  EXPECT_EQ(html.str().find("<script src"), std::string::npos);  // self-contained
  EXPECT_EQ(html.str().find("http://"), html.str().find("http://www.w3.org/2000/svg"));

  const std::string cmp = compare_results(dir.string(), dir.string());
  EXPECT_NE(cmp.find("| 128->128 C1 | output tok/s |"), std::string::npos) << cmp;
  EXPECT_NE(cmp.find("| 1.000 |"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace llmesh::bench
