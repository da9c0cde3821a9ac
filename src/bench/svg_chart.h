// Minimal inline SVG charts for report.html (no scripts, no external files,
// so the report opens offline): grouped bars and lines with axes and a legend.
#pragma once

#include <string>
#include <vector>

namespace llmesh::bench {

struct ChartSeries {
  std::string label;
  std::vector<double> values;  // one per category (bars) or per x (lines); NaN = missing
};

// Categories along x, one bar per series in each group.
std::string svg_bar_chart(const std::string& title, const std::string& y_label,
                          const std::vector<std::string>& categories, const std::vector<ChartSeries>& series);

// Lines over numeric x values (each series its own xs).
struct LineSeries {
  std::string label;
  std::vector<double> xs, ys;
};
std::string svg_line_chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                           const std::vector<LineSeries>& series);

std::string html_escape(const std::string& text);

}  // namespace llmesh::bench
