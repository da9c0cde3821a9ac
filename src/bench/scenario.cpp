#include "bench/scenario.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace llmesh::bench {

using nlohmann::json;

namespace {

PointSpec fixed(int64_t isl, int64_t osl, int64_t concurrency, int64_t num_requests, int64_t num_warmups) {
  PointSpec p;
  p.kind = "fixed";
  p.isl = isl;
  p.osl = osl;
  p.concurrency = concurrency;
  p.num_requests = num_requests;
  p.num_warmups = num_warmups;
  return p;
}

int64_t scale_count(int64_t n, double scale, int64_t min_value) {
  return std::max<int64_t>(min_value, static_cast<int64_t>(std::llround(static_cast<double>(n) * scale)));
}

json toml_to_json(const toml::node& node) {
  if (const auto* t = node.as_table()) {
    json j = json::object();
    for (const auto& [k, v] : *t) j[std::string(k.str())] = toml_to_json(v);
    return j;
  }
  if (const auto* a = node.as_array()) {
    json j = json::array();
    for (const auto& v : *a) j.push_back(toml_to_json(v));
    return j;
  }
  if (auto v = node.value_exact<int64_t>()) return *v;
  if (auto v = node.value_exact<double>()) return *v;
  if (auto v = node.value_exact<bool>()) return *v;
  if (auto v = node.value_exact<std::string>()) return *v;
  fail("unsupported TOML value type");
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream ss(line);
  for (std::string cell; std::getline(ss, cell, '\t');) {
    while (!cell.empty() && (cell.back() == ' ' || cell.back() == '\r')) cell.pop_back();
    while (!cell.empty() && cell.front() == ' ') cell.erase(0, 1);
    cells.push_back(cell);
  }
  return cells;
}

}  // namespace

std::string default_name(const PointSpec& p) {
  if (p.kind == "fixed")
    return fmt::format("{}->{} C{}{}", format_tokens(p.isl), format_tokens(p.osl), p.concurrency,
                       p.cache == "warm" ? " warm" : "");
  if (p.kind == "interference")
    return fmt::format("{}->{} C{} + {}->{}", format_tokens(p.isl), format_tokens(p.osl), p.concurrency,
                       format_tokens(p.inject_isl), format_tokens(p.inject_osl));
  if (p.kind == "prefix_ab") return fmt::format("prefix A/B {}", format_tokens(p.isl));
  if (p.kind == "needle") return "needle";
  if (p.kind == "sessions")
    return fmt::format("{} session{} x {} turns", p.num_sessions, p.num_sessions == 1 ? "" : "s", p.num_turns);
  if (p.kind == "soak") {
    const double s = p.duration_s;
    const std::string duration = s >= 3600 ? fmt::format("{:.3g}h", s / 3600)
                                 : s >= 60 ? fmt::format("{:.3g}min", s / 60)
                                           : fmt::format("{:.3g}s", s);
    return fmt::format("soak {} sessions {}", p.num_sessions, duration);
  }
  return "trace";
}

std::vector<PointSpec> quick_map_points() {
  std::vector<PointSpec> points = {
      fixed(1024, 1, 1, 16, 2),     fixed(32768, 1, 1, 8, 1),      fixed(131072, 1, 1, 4, 1),
      fixed(32768, 1, 16, 32, 2),   fixed(1024, 1024, 1, 4, 1),    fixed(1024, 1024, 16, 32, 4),
      fixed(1024, 1024, 32, 64, 4), fixed(1024, 1024, 64, 128, 4), fixed(1024, 4096, 16, 32, 4),
      fixed(131072, 1024, 1, 2, 1), fixed(32768, 1024, 8, 16, 2)};
  for (PointSpec& p : points) p.name = default_name(p);
  return points;
}

std::vector<PointSpec> sanity_points() {
  std::vector<PointSpec> points = {fixed(128, 1, 1, 4, 1), fixed(1024, 1, 1, 2, 1), fixed(128, 32, 1, 2, 1),
                                   fixed(256, 32, 4, 8, 1)};
  for (PointSpec& p : points) p.name = default_name(p);
  return points;
}

PointSpec mode_point(const std::string& mode, const std::string& trace_path) {
  PointSpec p;
  if (mode == "interference") {
    p = fixed(1024, 1024, 32, 64, 4);
    p.kind = "interference";
    p.inject_isl = 131072;
    p.inject_osl = 1;
    p.inject_after_s = 5;
  } else if (mode == "prefix") {
    p.kind = "prefix_ab";
    p.isl = 32768;
    p.repetitions = 3;
  } else if (mode == "needle") {
    p.kind = "needle";
    p.context_lengths = {4096, 32768};
    p.num_depths = 5;
  } else if (mode == "sessions") {
    p.kind = "sessions";
  } else if (mode == "soak") {
    p.kind = "soak";
    p.tool_tokens_min = 3000;  // Claude Code's tool results
    p.tool_tokens_max = 15000;
    p.output_tokens_min = 200;
    p.output_tokens_max = 1000;
    p.subagent_every_turns = 4;
  } else if (mode == "trace") {
    check(!trace_path.empty(), "--mode trace needs --trace FILE");
    p.kind = "trace";
    p.trace_path = trace_path;
  } else {
    fail("unknown mode '{}' (quick, sanity, interference, prefix, needle, sessions, soak, trace)", mode);
  }
  p.name = default_name(p);
  return p;
}

PointSpec scaled(PointSpec p, double scale) {
  check(scale > 0 && scale <= 100, "--scale must be in (0, 100], got {}", scale);
  const bool unnamed = p.name.empty() || p.name == default_name(p);
  if (scale != 1) {
    p.isl = scale_count(p.isl, scale, 16);
    p.osl = scale_count(p.osl, scale, 1);
    p.num_requests = scale_count(p.num_requests, scale, 1);
    p.num_warmups = p.num_warmups == 0 ? 0 : scale_count(p.num_warmups, scale, 1);
    p.inject_isl = scale_count(p.inject_isl, scale, 16);
    p.inject_osl = scale_count(p.inject_osl, scale, 1);
    for (int64_t& n : p.context_lengths) n = scale_count(n, scale, 64);
    if (p.kind != "soak") p.num_sessions = scale_count(p.num_sessions, scale, 1);  // a soak's load is its sessions
    p.shared_prefix_tokens = p.shared_prefix_tokens == 0 ? 0 : scale_count(p.shared_prefix_tokens, scale, 16);
    p.tool_tokens_min = scale_count(p.tool_tokens_min, scale, 1);
    p.tool_tokens_max = scale_count(p.tool_tokens_max, scale, 1);
    p.output_tokens_min = scale_count(p.output_tokens_min, scale, 1);
    p.output_tokens_max = scale_count(p.output_tokens_max, scale, 1);
    p.compact_at_tokens = scale_count(p.compact_at_tokens, scale, 64);
    p.token_scale *= scale;
  }
  // Concurrency is what a point measures, so it is kept: at least one request per slot.
  if (p.kind == "fixed" || p.kind == "interference") p.num_requests = std::max(p.num_requests, p.concurrency);
  if (unnamed) p.name = default_name(p);
  return p;
}

std::vector<PointSpec> load_scenario_file(const std::string& path) {
  std::ifstream in(path);
  check(in.good(), "--scenarios {}: cannot open", path);
  std::vector<PointSpec> points;
  if (path.ends_with(".tsv")) {
    std::string line;
    std::vector<std::string> columns;
    for (int line_no = 1; std::getline(in, line); ++line_no) {
      if (line.empty() || line[0] == '#') continue;
      std::vector<std::string> cells = split_tabs(line);
      if (columns.empty()) {
        columns = cells;
        continue;
      }
      check(cells.size() == columns.size(), "{}:{}: {} cells, the header has {}", path, line_no, cells.size(),
            columns.size());
      json j = {{"kind", "fixed"}};
      for (size_t i = 0; i < cells.size(); ++i) {
        const std::string& col = columns[i];
        if (col == "name" || col == "cache") {
          j[col] = cells[i];
        } else {
          try {
            size_t used = 0;
            const int64_t v = std::stoll(cells[i], &used);
            check(used == cells[i].size(), "");
            j[col] = v;
          } catch (const std::exception&) {
            fail("{}:{}: column '{}' must be an integer, got '{}'", path, line_no, col, cells[i]);
          }
        }
      }
      try {
        points.push_back(point_spec_from_json(j));
      } catch (const Error& e) {
        fail("{}:{}: {}", path, line_no, e.what());
      }
    }
  } else {
    toml::table table;
    try {
      table = toml::parse_file(path);
    } catch (const toml::parse_error& e) {
      fail("{}: {} (line {})", path, e.description(), e.source().begin.line);
    }
    json doc = toml_to_json(table);
    for (const auto& [key, value] : doc.items())
      check(key == "point", "{}: unknown top-level key '{}' (points go in [[point]] tables)", path, key);
    check(doc.contains("point") && doc["point"].is_array(), "{}: no [[point]] tables", path);
    for (size_t i = 0; i < doc["point"].size(); ++i) {
      try {
        points.push_back(point_spec_from_json(doc["point"][i]));
      } catch (const Error& e) {
        fail("{}: point {}: {}", path, i + 1, e.what());
      }
    }
  }
  check(!points.empty(), "{}: no points", path);
  for (PointSpec& p : points)
    if (p.name.empty()) p.name = default_name(p);
  return points;
}

}  // namespace llmesh::bench
