#include "sim/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "sim/report.h"
#include "sim/simulator.h"

namespace llmesh::sim {
namespace {

// A line chart: x = sweep points (evenly spaced, labelled by value), one or more series.
struct Series {
  std::string label;
  std::string colour;
  std::vector<double> values;
};

std::string line_chart_svg(const std::string& title, const std::vector<std::string>& x_labels,
                           const std::vector<Series>& series, double y_max, const std::string& y_unit) {
  const int width = 520, height = 260, left = 60, right = 20, top = 30, bottom = 40;
  const int plot_w = width - left - right, plot_h = height - top - bottom;
  if (y_max <= 0) y_max = 1;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
      "font-size=\"11\"><text x=\"{}\" y=\"16\" font-weight=\"bold\">{}</text>\n",
      width, height, left, html_escape(title));
  for (int i = 0; i <= 4; ++i) {
    double v = y_max * i / 4;
    double y = top + plot_h - plot_h * i / 4.0;
    svg += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>", left, left + plot_w,
                       y, y);
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:.3g}{}</text>", left - 4, y + 4, v, y_unit);
  }
  size_t n = x_labels.size();
  auto x_of = [&](size_t i) { return left + (n <= 1 ? plot_w / 2.0 : plot_w * static_cast<double>(i) / (n - 1)); };
  for (size_t i = 0; i < n; ++i) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>", x_of(i), top + plot_h + 16,
                       html_escape(x_labels[i]));
  }
  int legend_x = left;
  for (const Series& s : series) {
    std::string points;
    for (size_t i = 0; i < s.values.size(); ++i) {
      double y = top + plot_h - plot_h * std::min(1.0, s.values[i] / y_max);
      points += fmt::format("{:.1f},{:.1f} ", x_of(i), y);
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>", x_of(i), y, s.colour);
    }
    svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>", points, s.colour);
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>",
                       legend_x, height - 14, s.colour, legend_x + 14, height - 5, html_escape(s.label));
    legend_x += 14 + 7 * static_cast<int>(s.label.size()) + 16;
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace

SweepSpec parse_sweep(const std::string& text) {
  size_t eq = text.find('=');
  check(eq != std::string::npos && eq > 0 && eq + 1 < text.size(),
        "--sweep \"{}\" must look like section.key=v1,v2,...", text);
  SweepSpec spec;
  spec.path = text.substr(0, eq);
  std::string rest = text.substr(eq + 1);
  size_t start = 0;
  while (start <= rest.size()) {
    size_t comma = rest.find(',', start);
    std::string item = rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    check(!item.empty(), "--sweep \"{}\": empty value", text);
    nlohmann::json value;
    try {
      value = nlohmann::json::parse(item);
    } catch (const nlohmann::json::exception&) {
      value = item;
    }
    spec.values.push_back(value);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return spec;
}

std::vector<SweepPoint> run_sweep(const nlohmann::json& base_tree, const SweepSpec& spec) {
  std::vector<SweepPoint> points;
  for (const nlohmann::json& value : spec.values) {
    nlohmann::json tree = base_tree;
    set_by_path(tree, spec.path, value);
    SweepPoint point;
    point.value_text = value.is_string() ? value.get<std::string>() : value.dump();
    point.config = parse_config(tree);
    point.result = run_simulation(point.config);
    point.result.turns.clear();  // not reported per sweep point; keeps memory flat
    points.push_back(std::move(point));
  }
  return points;
}

std::string sweep_table_text(const SweepSpec& spec, const std::vector<SweepPoint>& points) {
  std::string out = fmt::format("{:>20} {:>12} {:>8} {:>8} {:>8} {:>8} {:>8} {:>10} {:>10}\n", spec.path,
                                "makespan_s", "util%", "prefill%", "decode%", "wait%", "hit%", "live_evict",
                                "ttft_mean");
  for (const SweepPoint& p : points) {
    const SimResult& r = p.result;
    out += fmt::format("{:>20} {:>12.1f} {:>8.1f} {:>8.1f} {:>8.1f} {:>8.1f} {:>8.1f} {:>10} {:>10.2f}\n", p.value_text,
                       r.makespan_s, 100 * r.mean_utilization(), 100 * r.mean_fraction(Activity::Prefill),
                       100 * r.mean_fraction(Activity::Decode), 100 * r.mean_fraction(Activity::Waiting),
                       100 * r.hit_rate(), r.evictions_live, r.ttft_s.mean);
  }
  return out;
}

void write_sweep_report(const SweepSpec& spec, const std::vector<SweepPoint>& points, const std::string& out_dir) {
  std::filesystem::create_directories(out_dir);
  std::string csv = spec.path +
                    ",makespan_s,utilization,prefill_fraction,decode_fraction,waiting_fraction,idle_fraction,"
                    "cache_hit_rate,evictions_live,recomputed_tokens,ttft_mean_s,ttft_p99_s,turn_latency_mean_s\n";
  std::vector<std::string> labels;
  Series util{"utilization", "#4e79a7", {}}, hit{"cache hit rate", "#59a14f", {}}, wait{"waiting", "#e15759", {}};
  Series makespan{"makespan (min)", "#f28e2b", {}};
  double max_makespan = 0;
  for (const SweepPoint& p : points) {
    const SimResult& r = p.result;
    std::string value = p.value_text;
    if (value.find(',') != std::string::npos) value = "\"" + value + "\"";
    csv += fmt::format("{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{},{},{:.6f},{:.6f},{:.6f}\n", value,
                       r.makespan_s, r.mean_utilization(), r.mean_fraction(Activity::Prefill),
                       r.mean_fraction(Activity::Decode), r.mean_fraction(Activity::Waiting),
                       r.mean_fraction(Activity::Idle), r.hit_rate(), r.evictions_live, r.recomputed_tokens,
                       r.ttft_s.mean, r.ttft_s.p99, r.turn_latency_s.mean);
    labels.push_back(p.value_text);
    util.values.push_back(r.mean_utilization());
    hit.values.push_back(r.hit_rate());
    wait.values.push_back(r.mean_fraction(Activity::Waiting));
    makespan.values.push_back(r.makespan_s / 60);
    max_makespan = std::max(max_makespan, r.makespan_s / 60);
  }
  write_text_file(out_dir + "/sweep.csv", csv);

  std::string body = "<h1>llmesh sim sweep: " + html_escape(spec.path) + "</h1>\n<pre>" +
                     html_escape(sweep_table_text(spec, points)) + "</pre>\n";
  body += line_chart_svg("fractions vs " + spec.path, labels, {util, hit, wait}, 1.0, "");
  body += line_chart_svg("makespan vs " + spec.path, labels, {makespan}, max_makespan * 1.1, "");
  body += "<h2>Definitions</h2>";
  body += kDefinitionsHtml;
  body += "<h2>Timelines</h2><div class=\"key\"><span style=\"background:#f28e2b\"></span>prefill"
          "<span style=\"background:#4e79a7\"></span>decode<span style=\"background:#e15759\"></span>waiting"
          "<span style=\"background:#ececec\"></span>idle</div>\n";
  for (const SweepPoint& p : points) {
    body += "<h3>" + html_escape(spec.path + " = " + p.value_text) + "</h3><pre>" +
            html_escape(summary_text(p.config, p.result)) + "</pre>\n" + timeline_svg(p.result);
  }
  write_text_file(out_dir + "/sweep.html", html_page("llmesh sim sweep: " + spec.path, body));
}

}  // namespace llmesh::sim
