#include "bench/report.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "bench/analysis.h"
#include "bench/results_store.h"
#include "bench/stats.h"
#include "bench/svg_chart.h"
#include "core/error.h"

namespace llmesh::bench {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

double num(const json& j, std::initializer_list<const char*> path) {
  const json* cur = &j;
  for (const char* key : path) {
    if (!cur->is_object() || !cur->contains(key)) return NAN;
    cur = &(*cur)[key];
  }
  return cur->is_number() ? cur->get<double>() : NAN;
}

std::string fmt_num(double v, int decimals = 1) {
  if (!std::isfinite(v)) return "–";
  return fmt::format("{:.{}f}", v, decimals);
}

std::string fmt_change(double v) {
  if (!std::isfinite(v)) return "–";
  return fmt::format("{:+.1f}%", v * 100);
}

std::string status_of(const json& r) {
  if (r.contains("skipped")) return "skipped";
  return r.value("valid", false) ? "valid" : "INVALID";
}

std::string joined_notes(const json& r) {
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : "; ") + s; };
  if (r.contains("skipped")) add(r["skipped"].get<std::string>());
  for (const json& x : r.value("invalid_reasons", json::array())) add(x.get<std::string>());
  for (const json& x : r.value("notes", json::array())) add(x.get<std::string>());
  return out;
}

json read_manifest(const std::string& dir) {
  std::ifstream in(dir + "/run_manifest.json");
  if (!in.good()) return json::object();
  json j = json::parse(in, nullptr, false);
  return j.is_discarded() ? json::object() : j;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  check(out.good(), "{}: cannot write", path);
  out << text;
}

std::string dist_cells(const json& m, const char* metric) {
  return fmt::format("{} / {} / {} / {}", fmt_num(num(m, {metric, "mean"})), fmt_num(num(m, {metric, "p50"})),
                     fmt_num(num(m, {metric, "p95"})), fmt_num(num(m, {metric, "p99"})));
}

std::string md_cell(std::string s) {
  for (size_t pos = 0; (pos = s.find('|', pos)) != std::string::npos; pos += 2) s.replace(pos, 1, "\\|");
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s;
}

}  // namespace

std::vector<json> analyze_results_dir(const std::string& dir) {
  const std::string path = dir + "/requests.jsonl";
  check(fs::exists(path), "{}: no requests.jsonl (is this a `llmesh bench run` results folder?)", dir);
  StoredRun run = load_requests_file(path);
  std::vector<json> results;
  for (const std::string& key : run.point_order) results.push_back(analyze_point(run.points[key]));
  return results;
}

std::vector<ReportTable> report_tables(const std::vector<json>& results) {
  std::vector<ReportTable> tables;
  for (const char* cache : {"cold", "warm"}) {
    ReportTable throughput{fmt::format("Fixed points ({}): throughput", cache),
                           "",
                           {"point", "ISL", "OSL", "C", "ok / sent", "window s", "req/s", "input tok/s", "output tok/s",
                            "total tok/s", "status"},
                           {}};
    ReportTable latency{fmt::format("Fixed points ({}): latency, ms (mean / p50 / p95 / p99)", cache),
                        "",
                        {"point", "TTFT", "TPOT", "ITL", "E2E"},
                        {}};
    for (const json& r : results) {
      if (r["kind"] != "fixed" || r.value("cache", "cold") != cache || r.contains("skipped")) continue;
      const json& m = r["metrics"];
      throughput.rows.push_back({r["name"], std::to_string(r.value("isl", 0)), std::to_string(r.value("osl", 0)),
                                 std::to_string(r.value("concurrency", 0)),
                                 fmt::format("{} / {}", m.value("num_ok", 0), m.value("num_requests", 0)),
                                 fmt_num(num(m, {"duration_s"}), 2), fmt_num(num(m, {"request_per_s"}), 3),
                                 fmt_num(num(m, {"input_tokens_per_s"})), fmt_num(num(m, {"output_tokens_per_s"})),
                                 fmt_num(num(m, {"total_tokens_per_s"})), status_of(r)});
      latency.rows.push_back({r["name"], dist_cells(m, "ttft_ms"), dist_cells(m, "tpot_ms"), dist_cells(m, "itl_ms"),
                              dist_cells(m, "e2e_ms")});
    }
    if (!throughput.rows.empty()) {
      tables.push_back(std::move(throughput));
      tables.push_back(std::move(latency));
    }
  }
  ReportTable interference{
      "Interference A/B",
      "The decode background alone, then with one long prefill injected; changes are with / alone − 1.",
      {"background + injection", "status", "output tok/s alone → with", "change", "TTFT p95 ms alone → with",
       "TPOT p95 ms alone → with", "E2E p95 ms alone → with", "injected TTFT ms"},
      {}};
  ReportTable prefix{"Prefix-cache A/B",
                     "P cold, the same P again (warm), Q of the same length (cold); TTFT ms p50.",
                     {"point", "ISL", "P cold", "P warm", "Q cold", "cold / warm", "P warm cached share", "status"},
                     {}};
  ReportTable needle{"Needle in a haystack", "", {"context tokens", "prompt tokens", "depth", "result", "answer"}, {}};
  ReportTable sessions{
      "Agent sessions and trace replay",
      "Reuse = cached tokens / the session's previous prompt (capped at 1).",
      {"point", "turns sent", "ok", "output tok/s", "TTFT ms p50 / p95", "reuse mean", "sub-agent reuse", "status"},
      {}};
  ReportTable turns{"Per turn",
                    "",
                    {"point", "turn", "requests", "prompt tokens", "cached tokens", "reuse", "TTFT ms p50 / p95"},
                    {}};
  for (const json& r : results) {
    const std::string kind = r["kind"];
    if (r.contains("skipped")) continue;
    if (kind == "interference") {
      const json& a = r["alone"];
      const json& b = r["with_injection"];
      const json& ab = r["interference"];
      const bool overlapped = ab.value("status", "") == "OVERLAPPED";
      interference.rows.push_back(
          {r["name"], ab.value("status", "?"),
           fmt::format("{} → {}", fmt_num(num(a, {"output_tokens_per_s"})), fmt_num(num(b, {"output_tokens_per_s"}))),
           overlapped ? fmt_change(num(ab, {"output_tokens_per_s_change"})) : "–",
           fmt::format("{} → {} ({})", fmt_num(num(a, {"ttft_ms", "p95"})), fmt_num(num(b, {"ttft_ms", "p95"})),
                       overlapped ? fmt_change(num(ab, {"ttft_p95_change"})) : "–"),
           fmt::format("{} → {} ({})", fmt_num(num(a, {"tpot_ms", "p95"})), fmt_num(num(b, {"tpot_ms", "p95"})),
                       overlapped ? fmt_change(num(ab, {"tpot_p95_change"})) : "–"),
           fmt::format("{} → {} ({})", fmt_num(num(a, {"e2e_ms", "p95"})), fmt_num(num(b, {"e2e_ms", "p95"})),
                       overlapped ? fmt_change(num(ab, {"e2e_p95_change"})) : "–"),
           fmt_num(num(ab, {"injected_ttft_ms"}))});
    } else if (kind == "prefix_ab") {
      const json& p = r["prefix_ab"];
      prefix.rows.push_back(
          {r["name"], std::to_string(r.value("isl", 0)), fmt_num(num(p, {"p_cold", "ttft_ms", "p50"})),
           fmt_num(num(p, {"p_warm", "ttft_ms", "p50"})), fmt_num(num(p, {"q_cold", "ttft_ms", "p50"})),
           fmt_num(num(r, {"warm_speedup_p50"}), 2) + "×", fmt_num(num(p, {"p_warm", "cached_share_mean"}), 3),
           status_of(r)});
    } else if (kind == "needle") {
      for (const json& row : r["needle"])
        needle.rows.push_back(
            {std::to_string(row.value("context_tokens", 0)),
             row["prompt_tokens"].is_number() ? std::to_string(row["prompt_tokens"].get<int64_t>()) : "–",
             fmt_num(num(row, {"depth"}), 2), row.value("pass", false) ? "PASS" : "fail", row.value("answer", "")});
    } else if (kind == "sessions" || kind == "trace") {
      const json& m = r["metrics"];
      sessions.rows.push_back(
          {r["name"], std::to_string(m.value("num_requests", 0)), std::to_string(m.value("num_ok", 0)),
           fmt_num(num(m, {"output_tokens_per_s"})),
           fmt::format("{} / {}", fmt_num(num(m, {"ttft_ms", "p50"})), fmt_num(num(m, {"ttft_ms", "p95"}))),
           fmt_num(num(r, {"reuse_mean"}), 3), fmt_num(num(r, {"subagent_reuse_mean"}), 3), status_of(r)});
      for (const json& t : r["turns"])
        turns.rows.push_back(
            {r["name"], std::to_string(t.value("turn", 0)), std::to_string(t.value("num_requests", 0)),
             fmt_num(num(t, {"prompt_tokens_mean"}), 0), fmt_num(num(t, {"cached_tokens_mean"}), 0),
             fmt_num(num(t, {"reuse_mean"}), 3),
             fmt::format("{} / {}", fmt_num(num(t, {"ttft_ms", "p50"})), fmt_num(num(t, {"ttft_ms", "p95"})))});
    }
  }
  ReportTable soak{"Soak",
                   "Reuse = cached tokens / the conversation's previous prompt. RSS slope after the first tenth; "
                   "llmesh's host KV tier fills by design up to --kv-host-gib, so RSS without it is the leak signal. "
                   "Idle KV blocks: held by requests once the soak ends, against before it started.",
                   {"point", "requests", "errors", "compactions", "reuse worst / p5 / median", "TTFT ms p50 / p95",
                    "TPOT ms p50 / p95", "RSS MiB first → last", "RSS slope MiB/h", "RSS − host KV tier: MiB, slope MiB/h",
                    "idle KV blocks", "status"},
                   {}};
  ReportTable soak_windows{"Soak over time", "", {"point", "window", "requests ok", "TTFT ms p50 / p95",
                                                   "TPOT ms p50 / p95"}, {}};
  for (const json& r : results) {
    if (r["kind"] != "soak" || r.contains("skipped")) continue;
    const json& m = r["metrics"];
    std::string errors = std::to_string(r.value("num_errors", int64_t(0)));
    for (const auto& [kind, n] : r["errors_by_kind"].items()) errors += fmt::format(" ({}: {})", kind, n.get<int64_t>());
    soak.rows.push_back(
        {r["name"], std::to_string(m.value("num_requests", 0)), errors, std::to_string(r.value("num_compactions", 0)),
         fmt::format("{} / {} / {}", fmt_num(num(r, {"reuse", "worst"}), 3), fmt_num(num(r, {"reuse", "p5"}), 3),
                     fmt_num(num(r, {"reuse", "median"}), 3)),
         fmt::format("{} / {}", fmt_num(num(m, {"ttft_ms", "p50"})), fmt_num(num(m, {"ttft_ms", "p95"}))),
         fmt::format("{} / {}", fmt_num(num(m, {"tpot_ms", "p50"})), fmt_num(num(m, {"tpot_ms", "p95"}))),
         fmt::format("{} → {}", fmt_num(num(r, {"rss_mib_first"}), 0), fmt_num(num(r, {"rss_mib_last"}), 0)),
         fmt_num(num(r, {"rss_slope_mib_per_hour"}), 1),
         fmt::format("{} → {}, {}", fmt_num(num(r, {"rss_without_host_tier_mib_first"}), 0),
                     fmt_num(num(r, {"rss_without_host_tier_mib_last"}), 0),
                     fmt_num(num(r, {"rss_without_host_tier_slope_mib_per_hour"}), 1)),
         fmt::format("{} → {}", fmt_num(num(r, {"kv_blocks_used_baseline"}), 0),
                     fmt_num(num(r, {"kv_blocks_used_idle"}), 0)),
         status_of(r)});
    for (const json& w : r["windows"])
      soak_windows.rows.push_back(
          {r["name"], fmt::format("{}–{} min", fmt_num(num(w, {"from_s"}) / 60, 1), fmt_num(num(w, {"to_s"}) / 60, 1)),
           std::to_string(w.value("num_ok", 0)),
           fmt::format("{} / {}", fmt_num(num(w, {"ttft_ms", "p50"})), fmt_num(num(w, {"ttft_ms", "p95"}))),
           fmt::format("{} / {}", fmt_num(num(w, {"tpot_ms", "p50"})), fmt_num(num(w, {"tpot_ms", "p95"})))});
  }
  for (ReportTable* t : {&interference, &prefix, &needle, &sessions, &turns, &soak, &soak_windows})
    if (!t->rows.empty()) tables.push_back(std::move(*t));
  ReportTable problems{"Status and notes",
                       "Every point that is not valid, was skipped, or carries a note.",
                       {"point", "kind", "status", "why"},
                       {}};
  for (const json& r : results) {
    const std::string notes = joined_notes(r);
    if (status_of(r) != "valid" || !notes.empty()) problems.rows.push_back({r["name"], r["kind"], status_of(r), notes});
  }
  if (!problems.rows.empty()) tables.push_back(std::move(problems));
  return tables;
}

std::string summary_csv(const std::vector<json>& results) {
  std::string out =
      "kind,name,isl,osl,concurrency,cache,status,num_requests,num_ok,num_failed,duration_s,request_per_s,"
      "input_tokens_per_s,output_tokens_per_s,total_tokens_per_s";
  for (const char* metric : {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"})
    for (const char* stat : {"mean", "p50", "p95", "p99"}) out += fmt::format(",{}_{}", metric, stat);
  out += ",notes\n";
  auto quoted = [](std::string s) {
    for (size_t pos = 0; (pos = s.find('"', pos)) != std::string::npos; pos += 2) s.insert(pos, "\"");
    return "\"" + s + "\"";
  };
  auto cell = [](double v) { return std::isfinite(v) ? fmt::format("{}", v) : std::string(); };
  for (const json& r : results) {
    const json m = r.value("metrics", json::object());
    out += fmt::format("{},{},{},{},{},{},{}", r.value("kind", ""), quoted(r.value("name", "")),
                       r.contains("isl") ? std::to_string(r["isl"].get<int64_t>()) : "",
                       r.contains("osl") ? std::to_string(r["osl"].get<int64_t>()) : "",
                       r.contains("concurrency") ? std::to_string(r["concurrency"].get<int64_t>()) : "",
                       r.value("cache", ""), status_of(r));
    for (const char* k : {"num_requests", "num_ok", "num_failed", "duration_s", "request_per_s", "input_tokens_per_s",
                          "output_tokens_per_s", "total_tokens_per_s"})
      out += "," + cell(num(m, {k}));
    for (const char* metric : {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"})
      for (const char* stat : {"mean", "p50", "p95", "p99"}) out += "," + cell(num(m, {metric, stat}));
    out += "," + quoted(joined_notes(r)) + "\n";
  }
  return out;
}

static std::string manifest_lines(const json& manifest, bool markdown) {
  std::string out;
  auto line = [&](const std::string& label, const std::string& value) {
    if (value.empty()) return;
    out += markdown ? fmt::format("- **{}**: {}\n", label, value)
                    : fmt::format("<li><b>{}</b>: {}</li>\n", html_escape(label), html_escape(value));
  };
  auto str = [&](const char* key) {
    if (!manifest.contains(key)) return std::string();
    return manifest[key].is_string() ? manifest[key].get<std::string>() : manifest[key].dump();
  };
  line("server", str("url"));
  line("model", str("model"));
  line("API", str("api"));
  line("server context", str("context_limit"));
  line("cache flush", str("flush_endpoint"));
  line("started", str("start_time"));
  line("ended", str("end_time"));
  line("host", str("host"));
  line("llmesh", str("llmesh_version"));
  line("command", str("command_line"));
  return out;
}

std::string report_markdown(const json& manifest, const std::vector<json>& results) {
  std::string out = "# llmesh bench report\n\n" + manifest_lines(manifest, true) + "\n";
  for (const ReportTable& t : report_tables(results)) {
    out += "## " + t.title + "\n\n";
    if (!t.intro.empty()) out += t.intro + "\n\n";
    out += "|";
    for (const std::string& h : t.headers) out += " " + md_cell(h) + " |";
    out += "\n|";
    for (size_t i = 0; i < t.headers.size(); ++i) out += " --- |";
    out += "\n";
    for (const auto& row : t.rows) {
      out += "|";
      for (const std::string& c : row) out += " " + md_cell(c) + " |";
      out += "\n";
    }
    out += "\n";
  }
  out += "## Definitions\n\n";
  out += kMetricDefinitions;
  out += "\n";
  return out;
}

std::string report_html(const json& manifest, const std::vector<json>& results) {
  std::string out =
      "<!doctype html><html><head><meta charset=\"utf-8\"><title>llmesh bench report</title><style>"
      "body{font-family:sans-serif;margin:24px;max-width:1200px}table{border-collapse:collapse;margin:8px 0 24px}"
      "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:right}th{background:#f3f3f3}"
      "td:first-child,th:first-child{text-align:left}svg{margin:8px 0}</style></head><body>\n"
      "<h1>llmesh bench report</h1>\n<ul>\n" +
      manifest_lines(manifest, false) + "</ul>\n";
  // Charts: latency percentiles per fixed point, throughput vs concurrency, sessions by turn.
  std::vector<std::string> names;
  ChartSeries ttft50{"TTFT p50", {}}, ttft95{"TTFT p95", {}}, ttft99{"TTFT p99", {}};
  ChartSeries e2e50{"E2E p50", {}}, e2e95{"E2E p95", {}}, e2e99{"E2E p99", {}};
  std::map<std::string, LineSeries> by_shape;
  for (const json& r : results) {
    if (r["kind"] != "fixed" || r.contains("skipped")) continue;
    const json& m = r["metrics"];
    names.push_back(r["name"]);
    ttft50.values.push_back(num(m, {"ttft_ms", "p50"}));
    ttft95.values.push_back(num(m, {"ttft_ms", "p95"}));
    ttft99.values.push_back(num(m, {"ttft_ms", "p99"}));
    e2e50.values.push_back(num(m, {"e2e_ms", "p50"}));
    e2e95.values.push_back(num(m, {"e2e_ms", "p95"}));
    e2e99.values.push_back(num(m, {"e2e_ms", "p99"}));
    const std::string shape = fmt::format("{}->{} {}", r.value("isl", 0), r.value("osl", 0), r.value("cache", ""));
    LineSeries& s = by_shape[shape];
    s.label = shape;
    s.xs.push_back(num(r, {"concurrency"}));
    s.ys.push_back(num(m, {"output_tokens_per_s"}));
  }
  if (!names.empty()) {
    out += svg_bar_chart("TTFT percentiles per point", "ms", names, {ttft50, ttft95, ttft99});
    out += svg_bar_chart("E2E latency percentiles per point", "ms", names, {e2e50, e2e95, e2e99});
    std::vector<LineSeries> lines;
    for (auto& [shape, s] : by_shape)
      if (s.xs.size() >= 2 || by_shape.size() <= 8) lines.push_back(s);
    out += svg_line_chart("Output throughput vs concurrency", "concurrency", "output tok/s", lines);
  }
  std::vector<LineSeries> ttft_by_turn, reuse_by_turn;
  for (const json& r : results) {
    if ((r["kind"] != "sessions" && r["kind"] != "trace") || r.contains("skipped")) continue;
    LineSeries t{r["name"], {}, {}}, u{r["name"], {}, {}};
    for (const json& row : r["turns"]) {
      t.xs.push_back(num(row, {"turn"}));
      t.ys.push_back(num(row, {"ttft_ms", "p50"}));
      u.xs.push_back(num(row, {"turn"}));
      u.ys.push_back(num(row, {"reuse_mean"}));
    }
    ttft_by_turn.push_back(t);
    reuse_by_turn.push_back(u);
  }
  if (!ttft_by_turn.empty()) {
    out += svg_line_chart("Sessions: TTFT p50 by turn", "turn", "ms", ttft_by_turn);
    out += svg_line_chart("Sessions: cache reuse vs the previous prompt, by turn", "turn", "reuse", reuse_by_turn);
  }
  std::vector<LineSeries> rss_over_time, blocks_over_time;
  for (const json& r : results) {
    if (r["kind"] != "soak" || r.contains("skipped")) continue;
    LineSeries rss{r["name"], {}, {}}, blocks{r["name"], {}, {}};
    for (const json& s : r["samples"]) {
      rss.xs.push_back(num(s, {"t_s"}) / 60);
      rss.ys.push_back(num(s, {"rss_bytes"}) / double(1 << 20));
      blocks.xs.push_back(num(s, {"t_s"}) / 60);
      blocks.ys.push_back(num(s, {"kv_blocks_used"}));
    }
    rss_over_time.push_back(rss);
    blocks_over_time.push_back(blocks);
  }
  if (!rss_over_time.empty()) {
    out += svg_line_chart("Soak: server RSS", "minutes", "MiB", rss_over_time);
    out += svg_line_chart("Soak: KV blocks held by requests", "minutes", "blocks", blocks_over_time);
  }
  for (const ReportTable& t : report_tables(results)) {
    out += "<h2>" + html_escape(t.title) + "</h2>\n";
    if (!t.intro.empty()) out += "<p>" + html_escape(t.intro) + "</p>\n";
    out += "<table><tr>";
    for (const std::string& h : t.headers) out += "<th>" + html_escape(h) + "</th>";
    out += "</tr>\n";
    for (const auto& row : t.rows) {
      out += "<tr>";
      for (const std::string& c : row) out += "<td>" + html_escape(c) + "</td>";
      out += "</tr>\n";
    }
    out += "</table>\n";
  }
  out += "<h2>Definitions</h2>\n<ul>\n";
  std::istringstream defs(kMetricDefinitions);
  for (std::string line; std::getline(defs, line);) {
    if (line.starts_with("- ")) line.erase(0, 2);
    // **X**: bold the term.
    std::string html = html_escape(line);
    if (html.starts_with("**")) {
      const size_t end = html.find("**", 2);
      if (end != std::string::npos) html = "<b>" + html.substr(2, end - 2) + "</b>" + html.substr(end + 2);
    }
    out += "<li>" + html + "</li>\n";
  }
  out += "</ul>\n</body></html>\n";
  return out;
}

std::vector<json> write_reports(const std::string& dir) {
  const std::vector<json> results = analyze_results_dir(dir);
  const json manifest = read_manifest(dir);
  std::string jsonl;
  for (const json& r : results) jsonl += json_line(r) + "\n";
  write_file(dir + "/summary.jsonl", jsonl);
  write_file(dir + "/summary.csv", summary_csv(results));
  write_file(dir + "/report.md", report_markdown(manifest, results));
  write_file(dir + "/report.html", report_html(manifest, results));
  return results;
}

std::string compare_results(const std::string& dir_a, const std::string& dir_b) {
  const std::vector<json> a = analyze_results_dir(dir_a), b = analyze_results_dir(dir_b);
  std::string out = fmt::format("# llmesh bench compare\n\nA = {}\nB = {}\n\n", dir_a, dir_b);
  out += "| point | metric | A | B | B/A |\n| --- | --- | --- | --- | --- |\n";
  static const std::pair<const char*, std::vector<const char*>> metrics[] = {
      {"output tok/s", {"output_tokens_per_s"}}, {"total tok/s", {"total_tokens_per_s"}},
      {"TTFT p50 ms", {"ttft_ms", "p50"}},       {"TTFT p95 ms", {"ttft_ms", "p95"}},
      {"TPOT p50 ms", {"tpot_ms", "p50"}},       {"TPOT p95 ms", {"tpot_ms", "p95"}},
      {"E2E p95 ms", {"e2e_ms", "p95"}}};
  int64_t num_matched = 0;
  for (const json& ra : a) {
    const json* match = nullptr;
    for (const json& rb : b)
      if (rb["key"] == ra["key"]) match = &rb;
    if (match == nullptr)
      for (const json& rb : b)
        if (rb["name"] == ra["name"] && rb["kind"] == ra["kind"]) match = &rb;
    if (match == nullptr || !ra.contains("metrics") || !match->contains("metrics")) continue;
    ++num_matched;
    for (const auto& [label, path] : metrics) {
      const json* va = &ra["metrics"];
      const json* vb = &(*match)["metrics"];
      for (const char* k : path) {
        va = va->contains(k) ? &(*va)[k] : nullptr;
        vb = vb->contains(k) ? &(*vb)[k] : nullptr;
        if (va == nullptr || vb == nullptr) break;
      }
      const double x = va != nullptr && va->is_number() ? va->get<double>() : NAN;
      const double y = vb != nullptr && vb->is_number() ? vb->get<double>() : NAN;
      std::string name = ra["name"].get<std::string>();
      if (status_of(ra) != "valid" || status_of(*match) != "valid") name += " (not valid)";
      out += fmt::format("| {} | {} | {} | {} | {} |\n", md_cell(name), label, fmt_num(x, 2), fmt_num(y, 2),
                         std::isfinite(x) && std::isfinite(y) && x != 0 ? fmt::format("{:.3f}", y / x) : "–");
    }
  }
  if (num_matched == 0) out += "\n(no point of A has a counterpart in B)\n";
  return out;
}

}  // namespace llmesh::bench
