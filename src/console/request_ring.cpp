#include "console/request_ring.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace llmesh::console {

using nlohmann::json;

double unix_seconds_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

namespace {

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
json optional_string(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

// The value at quantile q of sorted `v` (nearest rank).
double quantile(const std::vector<double>& v, double q) {
  const size_t rank = size_t(std::ceil(q * double(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

}  // namespace

json record_json(const RequestRecord& r, bool with_timeline) {
  json j = {
      {"id", r.id},
      {"protocol", r.protocol},
      {"model", r.model},
      {"session", optional_string(r.session)},
      {"stream", r.stream},
      {"arrived_at", r.arrived_at},
      {"status", r.status},
      {"outcome", r.outcome},
      {"error", optional_string(r.error)},
      {"prompt_tokens", r.num_prompt_tokens},
      {"cached_tokens", r.num_cached_tokens},
      {"output_tokens", r.num_output_tokens},
      {"ttft_s", optional_number(r.ttft_s)},
      {"tpot_s", optional_number(r.tpot_s)},
      {"duration_s", std::max(0.0, r.finished_at - r.arrived_at)},
      {"finish_reason", optional_string(r.finish_reason)},
  };
  if (!r.upstream.empty()) j["upstream"] = r.upstream;
  if (with_timeline) j["timeline"] = r.timeline;
  return j;
}

void RequestRing::add(RequestRecord record) {
  std::lock_guard lock(mu_);
  records_.push_back(std::move(record));
  while (records_.size() > capacity_) records_.pop_front();
  ++num_recorded_;
}

void RequestRing::set_capacity(size_t capacity) {
  std::lock_guard lock(mu_);
  capacity_ = std::max<size_t>(1, capacity);
  while (records_.size() > capacity_) records_.pop_front();
}

json RequestRing::list(size_t limit) const {
  std::lock_guard lock(mu_);
  json requests = json::array();
  for (auto it = records_.rbegin(); it != records_.rend() && requests.size() < limit; ++it)
    requests.push_back(record_json(*it, false));
  return {{"capacity", capacity_}, {"num_recorded", num_recorded_}, {"requests", std::move(requests)}};
}

std::optional<json> RequestRing::find(const std::string& id) const {
  std::lock_guard lock(mu_);
  for (auto it = records_.rbegin(); it != records_.rend(); ++it)
    if (it->id == id) return record_json(*it, true);
  return std::nullopt;
}

TtftQuantiles RequestRing::ttft_since(double since) const {
  std::vector<double> ttfts;
  {
    std::lock_guard lock(mu_);
    for (auto it = records_.rbegin(); it != records_.rend() && it->finished_at > since; ++it)
      if (it->ttft_s) ttfts.push_back(*it->ttft_s);
  }
  if (ttfts.empty()) return {};
  std::sort(ttfts.begin(), ttfts.end());
  return {quantile(ttfts, 0.50), quantile(ttfts, 0.95)};
}

json recent_ttft_fields(const RequestRing& ring, double now) {
  const TtftQuantiles q = ring.ttft_since(now - 60.0);
  return {{"ttft_p50_s", optional_number(q.p50)}, {"ttft_p95_s", optional_number(q.p95)}};
}

}  // namespace llmesh::console
