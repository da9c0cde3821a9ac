#include "bench/results_store.h"

#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace llmesh::bench {

namespace fs = std::filesystem;
using nlohmann::json;

StoredRun load_requests_file(const std::string& path) {
  StoredRun run;
  std::ifstream in(path);
  check(in.good(), "{}: cannot open", path);
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      // A run killed mid-write leaves a torn last line; anything else is corruption.
      if (in.peek() == EOF) break;
      fail("{}:{}: not JSON", path, line_no);
    }
    try {
      const std::string type = j.at("type").get<std::string>();
      const std::string key = j.at("point").get<std::string>();
      auto [it, inserted] = run.points.try_emplace(key);
      if (inserted) run.point_order.push_back(key);
      StoredPoint& point = it->second;
      if (type == "point_start" || type == "point_end") {
        point.spec = point_spec_from_json(j.at("spec"));
        if (type == "point_end") {
          point.finished = true;
          point.end_info = j.value("info", json::object());
        }
      } else if (type == "request") {
        point.records.push_back(record_from_json(j));
      } else {
        fail("unknown line type '{}'", type);
      }
    } catch (const Error& e) {
      fail("{}:{}: {}", path, line_no, e.what());
    } catch (const json::exception& e) {
      fail("{}:{}: {}", path, line_no, e.what());
    }
  }
  return run;
}

ResultsStore::ResultsStore(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  check(!ec, "--out {}: cannot create the folder: {}", dir_, ec.message());
  const std::string path = requests_path();
  if (fs::exists(path)) {
    StoredRun previous = load_requests_file(path);
    // Rewrite with the finished points only: an unfinished point is run again from scratch.
    const std::string tmp = path + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      check(out.good(), "{}: cannot write", tmp);
      for (const std::string& key : previous.point_order) {
        const StoredPoint& p = previous.points[key];
        if (!p.finished) continue;
        finished_.insert(key);
        out << json_line({{"type", "point_start"}, {"point", key}, {"spec", to_json(p.spec)}}) << '\n';
        for (const RequestRecord& r : p.records) out << json_line(to_json(r)) << '\n';
        out << json_line({{"type", "point_end"}, {"point", key}, {"spec", to_json(p.spec)}, {"info", p.end_info}})
            << '\n';
      }
    }
    fs::rename(tmp, path);
  }
  file_ = std::fopen(path.c_str(), "a");
  check(file_ != nullptr, "{}: cannot open for appending", path);
}

ResultsStore::~ResultsStore() {
  if (file_ != nullptr) std::fclose(file_);
}

void ResultsStore::write_line(const json& j) {
  const std::string line = json_line(j) + "\n";
  std::lock_guard<std::mutex> lock(mutex_);
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fflush(file_);
}

void ResultsStore::append(const RequestRecord& record) { write_line(to_json(record)); }

void ResultsStore::mark_point_start(const PointSpec& spec) {
  write_line({{"type", "point_start"}, {"point", spec.key()}, {"spec", to_json(spec)}});
}

void ResultsStore::mark_point_end(const PointSpec& spec, const json& info) {
  write_line({{"type", "point_end"}, {"point", spec.key()}, {"spec", to_json(spec)}, {"info", info}});
  std::lock_guard<std::mutex> lock(mutex_);
  finished_.insert(spec.key());
}

}  // namespace llmesh::bench
