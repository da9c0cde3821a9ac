// Turns a SimResult into files a person reads: summary.json (every number
// with its definition), workers.csv, turns.csv, timeline.csv, and a
// self-contained report.html with an inline SVG timeline per worker.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "sim/config.h"
#include "sim/sim_result.h"

namespace llmesh::sim {

nlohmann::json summary_json(const SimConfig& config, const SimResult& result);
// A few lines for the terminal.
std::string summary_text(const SimConfig& config, const SimResult& result);
// Rows = workers, x = time; prefill, decode, waiting and idle in distinct colours.
std::string timeline_svg(const SimResult& result, int width_px = 1000);

// Writes summary.json, workers.csv, turns.csv, timeline.csv, report.html into out_dir (created).
void write_report(const SimConfig& config, const SimResult& result, const std::string& out_dir);

// Shared helpers for the sweep report.
std::string html_escape(const std::string& text);
std::string html_page(const std::string& title, const std::string& body);
void write_text_file(const std::string& path, const std::string& text);
extern const char* const kDefinitionsHtml;

}  // namespace llmesh::sim
