// Reports of a results folder, always rebuilt from requests.jsonl:
// summary.jsonl (one analyzed point per line), summary.csv, report.md and a
// self-contained report.html (tables + inline SVG charts, opens offline).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace llmesh::bench {

// Analyzes every point of DIR/requests.jsonl, in run order.
std::vector<nlohmann::json> analyze_results_dir(const std::string& dir);

// A table both report formats render.
struct ReportTable {
  std::string title;
  std::string intro;  // markdown-free sentence, may be empty
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
};
std::vector<ReportTable> report_tables(const std::vector<nlohmann::json>& results);

std::string summary_csv(const std::vector<nlohmann::json>& results);
std::string report_markdown(const nlohmann::json& manifest, const std::vector<nlohmann::json>& results);
std::string report_html(const nlohmann::json& manifest, const std::vector<nlohmann::json>& results);

// Writes summary.jsonl, summary.csv, report.md, report.html into DIR from its
// requests.jsonl and run_manifest.json. Returns the analyzed points.
std::vector<nlohmann::json> write_reports(const std::string& dir);

// `bench compare`: points matched by key (else by name), key metrics of A and
// B side by side with B/A. Markdown.
std::string compare_results(const std::string& dir_a, const std::string& dir_b);

}  // namespace llmesh::bench
