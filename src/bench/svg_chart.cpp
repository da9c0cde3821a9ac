#include "bench/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace llmesh::bench {

namespace {

constexpr const char* kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                   "#59a14f", "#edc948", "#b07aa1", "#ff9da7"};
constexpr double kWidth = 760, kHeight = 320, kLeft = 70, kRight = 150, kTop = 34, kBottom = 80;

// A "nice" upper bound for an axis: 1, 2 or 5 times a power of ten.
double nice_max(double v) {
  if (!(v > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= v) return m * p;
  return 10 * p;
}

std::string number(double v) {
  if (v == 0) return "0";
  if (std::fabs(v) >= 100) return fmt::format("{:.0f}", v);
  if (std::fabs(v) >= 1) return fmt::format("{:.3g}", v);
  return fmt::format("{:.2g}", v);
}

std::string frame(const std::string& title, const std::string& y_label, double y_max, std::string& out) {
  out += fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="11">)",
      kWidth, kHeight);
  out += fmt::format(R"(<text x="{}" y="18" font-size="14" font-weight="bold">{}</text>)", kLeft, html_escape(title));
  const double plot_h = kHeight - kTop - kBottom;
  for (int i = 0; i <= 4; ++i) {
    const double y = kTop + plot_h * (1 - i / 4.0);
    out += fmt::format(R"(<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="#ddd"/>)", kLeft, kWidth - kRight, y, y);
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">{}</text>)", kLeft - 6, y + 4, number(y_max * i / 4.0));
  }
  out += fmt::format(R"svg(<text transform="translate(14,{}) rotate(-90)" text-anchor="middle">{}</text>)svg",
                     kTop + plot_h / 2, html_escape(y_label));
  return out;
}

void legend(const std::vector<std::string>& labels, std::string& out) {
  for (size_t i = 0; i < labels.size(); ++i) {
    const double y = kTop + 8 + 18 * static_cast<double>(i);
    out += fmt::format(R"(<rect x="{}" y="{}" width="12" height="12" fill="{}"/>)", kWidth - kRight + 12, y - 10,
                       kColors[i % 8]);
    out += fmt::format(R"(<text x="{}" y="{}">{}</text>)", kWidth - kRight + 30, y, html_escape(labels[i]));
  }
}

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string svg_bar_chart(const std::string& title, const std::string& y_label,
                          const std::vector<std::string>& categories, const std::vector<ChartSeries>& series) {
  double y_max = 0;
  for (const ChartSeries& s : series)
    for (double v : s.values)
      if (std::isfinite(v)) y_max = std::max(y_max, v);
  y_max = nice_max(y_max);
  std::string out;
  frame(title, y_label, y_max, out);
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  const double group_w = plot_w / static_cast<double>(std::max<size_t>(categories.size(), 1));
  const double bar_w = group_w * 0.8 / static_cast<double>(std::max<size_t>(series.size(), 1));
  for (size_t c = 0; c < categories.size(); ++c) {
    const double x0 = kLeft + group_w * static_cast<double>(c) + group_w * 0.1;
    for (size_t s = 0; s < series.size(); ++s) {
      const double v = c < series[s].values.size() ? series[s].values[c] : NAN;
      if (!std::isfinite(v)) continue;
      const double h = plot_h * v / y_max;
      out += fmt::format(
          R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"><title>{}: {}</title></rect>)",
          x0 + bar_w * static_cast<double>(s), kTop + plot_h - h, bar_w, h, kColors[s % 8],
          html_escape(series[s].label), number(v));
    }
    out += fmt::format(R"svg(<text transform="translate({:.1f},{}) rotate(35)">{}</text>)svg", x0 + group_w * 0.3,
                       kTop + plot_h + 14, html_escape(categories[c]));
  }
  std::vector<std::string> labels;
  for (const ChartSeries& s : series) labels.push_back(s.label);
  legend(labels, out);
  out += "</svg>";
  return out;
}

std::string svg_line_chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                           const std::vector<LineSeries>& series) {
  double x_max = 0, y_max = 0;
  for (const LineSeries& s : series) {
    for (double x : s.xs)
      if (std::isfinite(x)) x_max = std::max(x_max, x);
    for (double y : s.ys)
      if (std::isfinite(y)) y_max = std::max(y_max, y);
  }
  x_max = nice_max(x_max);
  y_max = nice_max(y_max);
  std::string out;
  frame(title, y_label, y_max, out);
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  for (int i = 0; i <= 4; ++i) {
    const double x = kLeft + plot_w * i / 4.0;
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)", x, kTop + plot_h + 16,
                       number(x_max * i / 4.0));
  }
  out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)", kLeft + plot_w / 2, kTop + plot_h + 36,
                     html_escape(x_label));
  for (size_t s = 0; s < series.size(); ++s) {
    std::string points;
    for (size_t i = 0; i < series[s].xs.size() && i < series[s].ys.size(); ++i) {
      if (!std::isfinite(series[s].ys[i])) continue;
      const double x = kLeft + plot_w * series[s].xs[i] / x_max, y = kTop + plot_h * (1 - series[s].ys[i] / y_max);
      points += fmt::format("{:.1f},{:.1f} ", x, y);
      out +=
          fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="{}"><title>{}: {}, {}</title></circle>)", x, y,
                      kColors[s % 8], html_escape(series[s].label), number(series[s].xs[i]), number(series[s].ys[i]));
    }
    out += fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>)", points, kColors[s % 8]);
  }
  std::vector<std::string> labels;
  for (const LineSeries& s : series) labels.push_back(s.label);
  legend(labels, out);
  out += "</svg>";
  return out;
}

}  // namespace llmesh::bench
