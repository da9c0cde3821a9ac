#include "bench/analysis.h"

#include <fmt/format.h>

namespace llmesh::bench {

using nlohmann::json;

std::vector<RequestRecord> records_with_role(const StoredPoint& point, const std::string& role) {
  std::vector<RequestRecord> out;
  for (const RequestRecord& r : point.records)
    if (r.role == role) out.push_back(r);
  return out;
}

void check_records(const std::vector<RequestRecord>& records, bool expect_cold, json& result) {
  int64_t num_failed = 0, num_cancelled = 0, prompt_mismatch = 0, output_mismatch = 0, cache_hits = 0,
          no_cache_info = 0, no_usage = 0;
  std::string first_error;
  for (const RequestRecord& r : records) {
    if (r.cancelled) {
      ++num_cancelled;
      continue;
    }
    if (!r.ok) {
      ++num_failed;
      if (first_error.empty()) first_error = r.error;
      continue;
    }
    if (r.prompt_tokens < 0 || r.completion_tokens < 0) ++no_usage;
    if (r.expected_prompt_tokens >= 0 && r.prompt_tokens >= 0 && r.prompt_tokens != r.expected_prompt_tokens)
      ++prompt_mismatch;
    if (r.expected_output_tokens >= 0 && r.completion_tokens >= 0 && r.completion_tokens != r.expected_output_tokens)
      ++output_mismatch;
    if (r.cached_tokens < 0) ++no_cache_info;
    if (expect_cold && r.cached_tokens > 0) ++cache_hits;
  }
  json& reasons = result["invalid_reasons"];
  json& notes = result["notes"];
  if (num_failed > 0) reasons.push_back(fmt::format("{} request(s) failed (first: {})", num_failed, first_error));
  if (num_cancelled > 0) reasons.push_back(fmt::format("{} request(s) stopped by Ctrl-C", num_cancelled));
  if (no_usage > 0) reasons.push_back(fmt::format("{} response(s) without usage: lengths unverifiable", no_usage));
  if (prompt_mismatch > 0) {
    const RequestRecord* example = nullptr;
    for (const RequestRecord& r : records)
      if (r.ok && r.expected_prompt_tokens >= 0 && r.prompt_tokens != r.expected_prompt_tokens) example = &r;
    reasons.push_back(fmt::format("{} request(s) with another prompt length than asked (e.g. {} instead of {})",
                                  prompt_mismatch, example->prompt_tokens, example->expected_prompt_tokens));
  }
  if (output_mismatch > 0) {
    const RequestRecord* example = nullptr;
    for (const RequestRecord& r : records)
      if (r.ok && r.expected_output_tokens >= 0 && r.completion_tokens != r.expected_output_tokens) example = &r;
    reasons.push_back(fmt::format("{} request(s) with another output length than asked (e.g. {} instead of {})",
                                  output_mismatch, example->completion_tokens, example->expected_output_tokens));
  }
  if (cache_hits > 0) reasons.push_back(fmt::format("{} cold request(s) hit cached prompt tokens", cache_hits));
  if (expect_cold && no_cache_info > 0)
    notes.push_back(fmt::format("{} response(s) did not report cached tokens: coldness not verified", no_cache_info));
  if (records.empty()) reasons.push_back("no measured requests");
}

json analyze_point(const StoredPoint& point) {
  json result = {{"kind", point.spec.kind},    {"name", point.spec.name},          {"key", point.spec.key()},
                 {"finished", point.finished}, {"invalid_reasons", json::array()}, {"notes", json::array()}};
  if (point.end_info.contains("skipped")) {
    result["skipped"] = point.end_info["skipped"];
    result["valid"] = false;
    return result;
  }
  json mode;
  const std::string& kind = point.spec.kind;
  if (kind == "fixed")
    mode = analyze_fixed(point);
  else if (kind == "interference")
    mode = analyze_interference(point);
  else if (kind == "prefix_ab")
    mode = analyze_prefix_ab(point);
  else if (kind == "needle")
    mode = analyze_needle(point);
  else if (kind == "soak")
    mode = analyze_soak(point);
  else
    mode = analyze_sessions(point);
  for (auto& [k, v] : mode.items()) {
    if (k == "invalid_reasons" || k == "notes")
      for (const json& x : v) result[k].push_back(x);
    else
      result[k] = v;
  }
  if (point.end_info.contains("notes"))
    for (const json& x : point.end_info["notes"]) result["notes"].push_back(x);
  if (!point.finished) result["invalid_reasons"].push_back("point not finished (run stopped)");
  result["valid"] = result["invalid_reasons"].empty();
  return result;
}

}  // namespace llmesh::bench
