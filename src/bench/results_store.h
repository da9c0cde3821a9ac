// The results folder of one run:
//   run_manifest.json   command line, server, its /v1/models, version, host, start/end
//   requests.jsonl      raw truth: one line per request (every chunk's time) plus
//                       point_start / point_end markers carrying each point's spec
//   summary.csv, summary.jsonl, report.md, report.html   rebuilt from requests.jsonl
// Re-running into the same folder resumes: records of points that never got a
// point_end (a killed or interrupted run) are dropped, finished points are kept
// and their numbers recomputed from their records.
#pragma once

#include <cstdio>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "bench/point_spec.h"
#include "bench/request_record.h"

namespace llmesh::bench {

// One point as read back from requests.jsonl.
struct StoredPoint {
  PointSpec spec;
  bool finished = false;    // a point_end line exists
  nlohmann::json end_info;  // the point_end line's "info" (notes, skip reasons, mode data)
  std::vector<RequestRecord> records;
};

// Everything in a requests.jsonl, points in first-seen order.
struct StoredRun {
  std::vector<std::string> point_order;
  std::map<std::string, StoredPoint> points;  // by key
};
StoredRun load_requests_file(const std::string& path);  // Error naming the file and line

class ResultsStore {
 public:
  // Creates the folder if needed. When requests.jsonl exists, drops the lines of
  // unfinished points (rewriting the file) and remembers the finished ones.
  explicit ResultsStore(std::string dir);
  ~ResultsStore();

  bool is_finished(const std::string& point_key) const { return finished_.count(point_key) != 0; }
  size_t num_resumed_points() const { return finished_.size(); }

  // Thread-safe; each line is flushed as written so a killed run keeps it.
  void append(const RequestRecord& record);
  void mark_point_start(const PointSpec& spec);
  void mark_point_end(const PointSpec& spec, const nlohmann::json& info);

  const std::string& dir() const { return dir_; }
  std::string requests_path() const { return dir_ + "/requests.jsonl"; }

 private:
  void write_line(const nlohmann::json& j);

  std::string dir_;
  std::set<std::string> finished_;
  std::mutex mutex_;
  std::FILE* file_ = nullptr;
};

}  // namespace llmesh::bench
