#include "sim/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace llmesh::sim {
namespace {

using json = nlohmann::json;

const char* const kActivityColours[kNumActivities] = {"#f28e2b", "#4e79a7", "#e15759", "#ececec"};

json distribution_json(const Distribution& d) {
  return {{"count", d.count}, {"mean", d.mean}, {"p50", d.p50}, {"p90", d.p90}, {"p99", d.p99}, {"max", d.max}};
}

std::string format_tokens(int64_t tokens) {
  if (tokens >= 10'000'000) return fmt::format("{:.1f}M", tokens / 1e6);
  if (tokens >= 10'000) return fmt::format("{:.0f}K", tokens / 1e3);
  return std::to_string(tokens);
}

}  // namespace

const char* const kDefinitionsHtml =
    "<ul>"
    "<li><b>makespan</b>: from t = 0 (when the first agent may start) to the last token of the last turn.</li>"
    "<li><b>prefill / decode</b>: the worker computes its own batch of that phase (its own step time from the "
    "step-time model).</li>"
    "<li><b>waiting</b>: the worker has requests but does not compute: its phase-synchronized group runs the "
    "other phase, it finished its part of a step and waits for the slowest worker, or its requests wait for KV "
    "room or a host-tier restore.</li>"
    "<li><b>idle</b>: the worker has no requests.</li>"
    "<li><b>utilization</b> = (prefill + decode) / makespan, per worker; the mean is over workers.</li>"
    "<li><b>cache hit rate</b> = prompt tokens found in the worker's GPU prefix cache / all prompt tokens "
    "(host-tier restores counted apart).</li>"
    "<li><b>evictions (live)</b>: cache entries of live sessions (current context of a session that will send "
    "more turns) trimmed to make room; finished sessions and contexts replaced by compaction are not counted "
    "there.</li>"
    "<li><b>recomputed tokens</b>: context a session had already computed that was prefilled again.</li>"
    "<li><b>TTFT</b>: turn arrival to its first token (end of its last prefill chunk); <b>turn latency</b>: "
    "arrival to last token.</li>"
    "</ul>";

json summary_json(const SimConfig& config, const SimResult& r) {
  json workers = json::array();
  for (const WorkerStats& w : r.workers) {
    workers.push_back({{"worker_id", w.worker_id},
                       {"name", w.name},
                       {"group_id", w.group_id},
                       {"role", w.role},
                       {"utilization", w.utilization(r.makespan_s)},
                       {"prefill_s", w.seconds[0]},
                       {"decode_s", w.seconds[1]},
                       {"waiting_s", w.seconds[2]},
                       {"idle_s", w.seconds[3]},
                       {"prefill_tokens", w.prefill_tokens},
                       {"decode_tokens", w.decode_tokens},
                       {"kv_capacity_tokens", w.kv_capacity_tokens},
                       {"peak_kv_tokens", w.peak_kv_tokens}});
  }
  return {
      {"name", config.name},
      {"seed", config.seed},
      {"deployment", to_string(config.deployment.mode)},
      {"routing", to_string(config.routing.policy)},
      {"phase_policy", to_string(config.scheduler.phase_policy)},
      {"eviction", to_string(config.cache.eviction)},
      {"num_workers", r.workers.size()},
      {"kv_capacity_tokens_per_worker", kv_capacity_tokens_per_worker(config)},
      {"makespan_s", r.makespan_s},
      {"utilization", r.mean_utilization()},
      {"prefill_fraction", r.mean_fraction(Activity::Prefill)},
      {"decode_fraction", r.mean_fraction(Activity::Decode)},
      {"waiting_fraction", r.mean_fraction(Activity::Waiting)},
      {"idle_fraction", r.mean_fraction(Activity::Idle)},
      {"cache_hit_rate", r.hit_rate()},
      {"num_sessions", r.num_sessions},
      {"num_requests", r.num_requests},
      {"num_compactions", r.num_compactions},
      {"num_steps", r.num_steps},
      {"prompt_tokens", r.prompt_tokens},
      {"hit_tokens", r.hit_tokens},
      {"restored_tokens", r.restored_tokens},
      {"prefill_computed_tokens", r.prefill_computed_tokens},
      {"recomputed_tokens", r.recomputed_tokens},
      {"output_tokens", r.output_tokens},
      {"evictions_live", r.evictions_live},
      {"evicted_tokens_live", r.evicted_tokens_live},
      {"evictions_dead", r.evictions_dead},
      {"ttft_s", distribution_json(r.ttft_s)},
      {"turn_latency_s", distribution_json(r.turn_latency_s)},
      {"wall_seconds", r.wall_seconds},
      {"definitions",
       {{"makespan_s", "t=0 to the last token of the last turn"},
        {"utilization", "mean over workers of (prefill + decode seconds) / makespan; a worker is in prefill/decode "
                        "only while computing its own batch"},
        {"waiting", "has requests but not computing: group in the other phase, barrier wait for the slowest "
                    "worker, or waiting for KV room / host restore"},
        {"idle", "no requests on the worker"},
        {"cache_hit_rate", "prompt tokens found in GPU prefix cache / all prompt tokens"},
        {"evictions_live", "cache entries of live sessions' current context trimmed to make room"}}},
      {"workers", workers},
  };
}

std::string summary_text(const SimConfig& config, const SimResult& r) {
  std::string out;
  out += fmt::format("{}: {} workers ({}), routing {}, phase {}, KV {} tokens/worker\n", config.name,
                     r.workers.size(), to_string(config.deployment.mode), to_string(config.routing.policy),
                     to_string(config.scheduler.phase_policy), format_tokens(kv_capacity_tokens_per_worker(config)));
  out += fmt::format("  makespan {:.1f} s ({:.1f} min), {} sessions, {} requests ({} compactions)\n", r.makespan_s,
                     r.makespan_s / 60, r.num_sessions, r.num_requests, r.num_compactions);
  out += fmt::format("  utilization {:.1f}% (prefill {:.1f}%, decode {:.1f}%), waiting {:.1f}%, idle {:.1f}%\n",
                     100 * r.mean_utilization(), 100 * r.mean_fraction(Activity::Prefill),
                     100 * r.mean_fraction(Activity::Decode), 100 * r.mean_fraction(Activity::Waiting),
                     100 * r.mean_fraction(Activity::Idle));
  out += fmt::format("  cache hit rate {:.1f}%, live evictions {} ({} tokens), recomputed {} tokens\n",
                     100 * r.hit_rate(), r.evictions_live, format_tokens(r.evicted_tokens_live),
                     format_tokens(r.recomputed_tokens));
  out += fmt::format("  TTFT mean {:.2f} s p50 {:.2f} p99 {:.2f}; turn latency mean {:.1f} s p99 {:.1f}\n",
                     r.ttft_s.mean, r.ttft_s.p50, r.ttft_s.p99, r.turn_latency_s.mean, r.turn_latency_s.p99);
  out += fmt::format("  simulated {} steps in {:.3f} s wall\n", r.num_steps, r.wall_seconds);
  return out;
}

std::string timeline_svg(const SimResult& r, int width_px) {
  const ActivityTimeline& t = r.timeline;
  const int num_workers = t.num_workers();
  const int label_px = 70, axis_px = 40;  // time axis + legend
  const int row_px = num_workers > 64 ? 6 : num_workers > 24 ? 12 : 18;
  const int height_px = num_workers * row_px + axis_px;
  const double makespan = std::max(r.makespan_s, 1e-9);
  const int used_bins = std::min(t.num_bins(), static_cast<int>(std::ceil(makespan / t.bin_width_s())));
  const double px_per_s = (width_px - label_px - 10) / makespan;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
      "font-size=\"10\">\n",
      width_px, height_px);
  // Bins are merged into columns about 3 px wide; within a column each
  // activity's share is drawn as a stacked bar quantized to 8 levels, and runs
  // of equal columns become one path segment, which keeps the SVG small.
  const int levels = 8;
  const int plot_px = width_px - label_px - 10;
  const int num_columns = std::max(1, std::min(used_bins, plot_px / 3));
  const double column_s = makespan / num_columns;
  for (int w = 0; w < num_workers; ++w) {
    int y0 = w * row_px;
    svg += fmt::format("<text x=\"2\" y=\"{}\">{}</text>", y0 + row_px - 3,
                       html_escape(w < static_cast<int>(r.workers.size()) ? r.workers[w].name : std::to_string(w)));
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>", label_px, y0 + 1,
                       makespan * px_per_s, row_px - 2, kActivityColours[3]);
    std::vector<std::array<double, 3>> columns(num_columns, {0, 0, 0});
    for (int b = 0; b < used_bins; ++b) {
      int c = std::min(num_columns - 1, static_cast<int>((b + 0.5) * t.bin_width_s() / column_s));
      for (int a = 0; a < 3; ++a) columns[c][a] += t.bin(w, b)[a];
    }
    std::string paths[3];
    std::array<int, 3> run_levels{0, 0, 0};
    int run_start = 0;
    auto flush = [&](int end_column) {
      double x = label_px + run_start * column_s * px_per_s;
      double wpx = (end_column - run_start) * column_s * px_per_s;
      double y = y0 + row_px - 1;
      for (int a = 0; a < 3; ++a) {
        if (run_levels[a] == 0) continue;
        double h = (row_px - 2) * run_levels[a] / static_cast<double>(levels);
        y -= h;
        paths[a] += fmt::format("M{:.1f} {:.1f}h{:.1f}v{:.1f}h{:.1f}z", x, y, wpx, h, -wpx);
      }
    };
    for (int c = 0; c < num_columns; ++c) {
      std::array<int, 3> lv;
      for (int a = 0; a < 3; ++a) lv[a] = static_cast<int>(std::lround(levels * columns[c][a] / column_s));
      if (lv != run_levels) {
        flush(c);
        run_levels = lv;
        run_start = c;
      }
    }
    flush(num_columns);
    for (int a = 0; a < 3; ++a) {
      if (!paths[a].empty()) svg += fmt::format("<path fill=\"{}\" d=\"{}\"/>", kActivityColours[a], paths[a]);
    }
    svg += "\n";
  }
  // Time axis: ~8 ticks at round numbers of minutes (long runs) or seconds.
  const double unit_s = makespan >= 600 ? 60 : 1;
  const char* unit_name = makespan >= 600 ? "min" : "s";
  double raw = makespan / unit_s / 8;
  double magnitude = std::pow(10, std::floor(std::log10(raw)));
  double tick = magnitude * (raw / magnitude < 2 ? 2 : raw / magnitude < 5 ? 5 : 10);
  int y_axis = num_workers * row_px;
  for (double x = 0; x * unit_s <= makespan + 1e-9; x += tick) {
    double px = label_px + x * unit_s * px_per_s;
    svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#555\"/>", px, y_axis,
                       y_axis + 4);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:g} {}</text>", px, y_axis + 15, x,
                       unit_name);
  }
  // Legend, so the SVG stands on its own.
  int legend_x = label_px;
  for (int a = 0; a < kNumActivities; ++a) {
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>",
                       legend_x, y_axis + 24, kActivityColours[a], legend_x + 14, y_axis + 33,
                       activity_name(static_cast<Activity>(a)));
    legend_x += 80;
  }
  svg += "</svg>\n";
  return svg;
}

std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string html_page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + html_escape(title) +
         "</title>\n<style>body{font-family:sans-serif;margin:20px;max-width:1100px}"
         "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
         "th{background:#f4f4f4}.key span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px}"
         "</style></head><body>\n" +
         body + "\n</body></html>\n";
}

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  check(out.good(), "cannot write {}", path);
  out << text;
  check(out.good(), "cannot write {}", path);
}

void write_report(const SimConfig& config, const SimResult& r, const std::string& out_dir) {
  std::filesystem::create_directories(out_dir);
  const std::string dir = out_dir + "/";
  write_text_file(dir + "summary.json", summary_json(config, r).dump(2) + "\n");

  std::string workers = "worker_id,name,group_id,role,utilization,prefill_s,decode_s,waiting_s,idle_s,prefill_tokens,"
                        "decode_tokens,kv_capacity_tokens,peak_kv_tokens\n";
  for (const WorkerStats& w : r.workers) {
    workers += fmt::format("{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{},{},{},{}\n", w.worker_id, w.name,
                           w.group_id, w.role, w.utilization(r.makespan_s), w.seconds[0], w.seconds[1], w.seconds[2],
                           w.seconds[3], w.prefill_tokens, w.decode_tokens, w.kv_capacity_tokens, w.peak_kv_tokens);
  }
  write_text_file(dir + "workers.csv", workers);

  std::string turns = "session_id,turn,is_compaction,worker_id,decode_worker_id,arrival_s,first_token_s,finish_s,"
                      "prompt_tokens,new_input_tokens,hit_tokens,restored_tokens,output_tokens\n";
  for (const TurnRecord& t : r.turns) {
    turns += fmt::format("{},{},{},{},{},{:.6f},{:.6f},{:.6f},{},{},{},{},{}\n", t.session_id, t.turn_index,
                         t.is_compaction ? 1 : 0, t.worker_id, t.decode_worker_id, t.arrival_s, t.first_token_s,
                         t.finish_s, t.prompt_tokens, t.new_input_tokens, t.hit_tokens, t.restored_tokens,
                         t.output_tokens);
  }
  write_text_file(dir + "turns.csv", turns);

  const ActivityTimeline& tl = r.timeline;
  int used_bins = std::min(tl.num_bins(), static_cast<int>(std::ceil(r.makespan_s / tl.bin_width_s())));
  std::string timeline = "worker_id,bin_start_s,bin_end_s,prefill_s,decode_s,waiting_s,idle_s\n";
  for (int w = 0; w < tl.num_workers(); ++w) {
    for (int b = 0; b < used_bins; ++b) {
      const auto& bin = tl.bin(w, b);
      timeline += fmt::format("{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f}\n", w, b * tl.bin_width_s(),
                              std::min((b + 1) * tl.bin_width_s(), r.makespan_s), bin[0], bin[1], bin[2], bin[3]);
    }
  }
  write_text_file(dir + "timeline.csv", timeline);

  std::string body = "<h1>llmesh sim: " + html_escape(config.name) + "</h1>\n<pre>" +
                     html_escape(summary_text(config, r)) + "</pre>\n";
  body += "<h2>Timeline</h2><div class=\"key\">";
  for (int a = 0; a < kNumActivities; ++a) {
    body += fmt::format("<span style=\"background:{}\"></span>{}", kActivityColours[a],
                        activity_name(static_cast<Activity>(a)));
  }
  body += "</div>\n" + timeline_svg(r) + "<h2>Definitions</h2>" + kDefinitionsHtml;
  body += "<h2>Workers</h2><table><tr><th>worker</th><th>role</th><th>utilization</th><th>prefill</th>"
          "<th>decode</th><th>waiting</th><th>idle</th><th>peak KV</th></tr>\n";
  for (const WorkerStats& w : r.workers) {
    double m = std::max(r.makespan_s, 1e-12);
    body += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{:.1f}%</td><td>{:.1f}%</td><td>{:.1f}%</td><td>{:.1f}%</td><td>{:.1f}%</td>"
        "<td>{} / {}</td></tr>\n",
        html_escape(w.name), w.role, 100 * w.utilization(m), 100 * w.seconds[0] / m, 100 * w.seconds[1] / m,
        100 * w.seconds[2] / m, 100 * w.seconds[3] / m, format_tokens(w.peak_kv_tokens),
        format_tokens(w.kv_capacity_tokens));
  }
  body += "</table>\n<h2>Latency (seconds)</h2><table><tr><th></th><th>mean</th><th>p50</th><th>p90</th><th>p99</th>"
          "<th>max</th></tr>\n";
  for (const auto& [label, d] : {std::pair{"TTFT", r.ttft_s}, std::pair{"turn latency", r.turn_latency_s}}) {
    body += fmt::format("<tr><td>{}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}</td>"
                        "</tr>\n",
                        label, d.mean, d.p50, d.p90, d.p99, d.max);
  }
  body += "</table>\n";
  write_text_file(dir + "report.html", html_page("llmesh sim: " + config.name, body));
}

}  // namespace llmesh::sim
