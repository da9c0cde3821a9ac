#include "api/cache_view.h"

#include <fmt/format.h>

namespace llmesh::api {

namespace {

void sample(std::string& out, const std::string& name, const std::string& help, const char* type,
            const std::string& labels, std::initializer_list<std::pair<const char*, double>> by_tier) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  for (const auto& [tier, value] : by_tier) out += fmt::format("{}{{{},tier=\"{}\"}} {}\n", name, labels, tier, value);
}

void metric(std::string& out, const std::string& name, const std::string& help, const char* type,
            const std::string& labels, double value) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{}{{{}}} {}\n", name, help, name, type, name, labels, value);
}

}  // namespace

void render_tier_metrics(std::string& out, const engine::EngineStats& s, const std::string& labels) {
  if (!s.has_tiers) return;
  const kv::KvTierStats& t = s.tiers;
  const auto& d = t.disk;
  sample(out, "llmesh:kv_tier_blocks", "KV blocks held by each lower tier.", "gauge", labels,
         {{"host", double(t.host.blocks)}, {"disk", double(d.blocks)}});
  sample(out, "llmesh:kv_tier_bytes", "Bytes held by each lower tier.", "gauge", labels,
         {{"host", double(t.host.bytes)}, {"disk", double(d.bytes)}});
  sample(out, "llmesh:kv_tier_capacity_bytes", "Byte budget of each lower tier (0: off).", "gauge", labels,
         {{"host", double(t.host.budget_bytes)}, {"disk", double(t.has_disk ? d.budget_bytes : 0)}});
  sample(out, "llmesh:kv_tier_promotions_total", "Blocks loaded back into the pool by a prefix hit, by source tier.",
         "counter", labels, {{"host", double(t.host.promotions)}, {"disk", double(t.disk_promotions)}});
  sample(out, "llmesh:kv_tier_demotions_total",
         "Blocks copied into a tier (host: evicted from the pool; disk: written).", "counter", labels,
         {{"host", double(t.host.demotions)}, {"disk", double(d.writes)}});
  sample(out, "llmesh:kv_tier_evictions_total", "Blocks a tier dropped to stay within its budget.", "counter", labels,
         {{"host", double(t.host.evictions)}, {"disk", double(d.evictions)}});
  metric(out, "llmesh:kv_disk_write_queue_blocks", "Blocks waiting to be written to the disk tier.", "gauge", labels,
         double(d.queue_blocks));
  metric(out, "llmesh:kv_disk_write_queue_bytes", "Bytes waiting to be written to the disk tier.", "gauge", labels,
         double(d.queue_bytes));
  metric(out, "llmesh:kv_disk_dropped_writes_total", "Disk-tier writes dropped (queue full, writing off).", "counter",
         labels, double(d.dropped_writes));
  metric(out, "llmesh:kv_disk_write_errors_total", "Disk-tier writes that failed (writing turns off).", "counter",
         labels, double(d.write_errors));
  metric(out, "llmesh:kv_disk_bad_files_total",
         "Disk-tier files that failed their checks (truncated, corrupt), dropped and never served.", "counter", labels,
         double(d.bad_files));
  metric(out, "llmesh:kv_disk_foreign_files", "Files of another model or layout found in the disk directory at start.",
         "gauge", labels, double(t.disk_recovery.foreign));
  metric(out, "llmesh:kv_restored_bytes_total", "K/V bytes loaded back into the pool from the tiers.", "counter",
         labels, double(t.restored_bytes));
  out += "# HELP llmesh:kv_restore_seconds Time to load one block back into the pool.\n"
         "# TYPE llmesh:kv_restore_seconds histogram\n";
  int64_t cumulative = 0;
  for (size_t i = 0; i < t.restore_histogram.size(); ++i) {
    cumulative += t.restore_histogram[i];
    const std::string le = i < kv::kRestoreBuckets.size() ? fmt::format("{}", kv::kRestoreBuckets[i]) : "+Inf";
    out += fmt::format("llmesh:kv_restore_seconds_bucket{{{},le=\"{}\"}} {}\n", labels, le, cumulative);
  }
  out += fmt::format("llmesh:kv_restore_seconds_sum{{{}}} {}\nllmesh:kv_restore_seconds_count{{{}}} {}\n", labels,
                     t.restore_seconds, labels, t.restored_blocks);
}

nlohmann::json cache_view_json(const engine::EngineStats& s) {
  using nlohmann::json;
  const kv::KvTierStats& t = s.tiers;
  const auto& d = t.disk;
  const auto& r = t.disk_recovery;
  json view = {
      {"pool",
       {{"blocks_total", s.num_blocks_total},
        {"blocks_used", s.num_blocks_used},
        {"blocks_cached", s.num_blocks_cached},
        {"blocks_pinned", s.num_blocks_pinned},
        {"evictions", s.num_evicted_blocks},
        {"promoted_blocks", s.num_promoted_blocks},
        {"failed_promotions", s.num_failed_promotions}}},
      {"prefix_cache",
       {{"queried_tokens", s.prefix_queried_tokens},
        {"hit_tokens", s.prefix_hit_tokens},
        {"hit_rate", s.prefix_queried_tokens > 0 ? double(s.prefix_hit_tokens) / double(s.prefix_queried_tokens) : 0.0}}},
      {"host",
       {{"enabled", s.has_tiers && t.host.budget_bytes > 0},
        {"blocks", t.host.blocks},
        {"bytes", t.host.bytes},
        {"budget_bytes", t.host.budget_bytes},
        {"promotions", t.host.promotions},
        {"demotions", t.host.demotions},
        {"evictions", t.host.evictions}}},
      {"disk",
       {{"enabled", s.has_tiers && t.has_disk},
        {"dir", t.disk_dir},
        {"writable", t.has_disk && d.writable},
        {"blocks", d.blocks},
        {"bytes", d.bytes},
        {"budget_bytes", d.budget_bytes},
        {"promotions", t.disk_promotions},
        {"writes", d.writes},
        {"dropped_writes", d.dropped_writes},
        {"write_errors", d.write_errors},
        {"queue_blocks", d.queue_blocks},
        {"queue_bytes", d.queue_bytes},
        {"evictions", d.evictions},
        {"bad_files", d.bad_files},
        {"recovered",
         {{"blocks", r.blocks},
          {"bytes", r.bytes},
          {"truncated", r.truncated},
          {"corrupt", r.corrupt},
          {"foreign", r.foreign},
          {"evicted", r.evicted},
          {"seconds", r.seconds}}}}},
      {"restore",
       {{"blocks", t.restored_blocks},
        {"bytes", t.restored_bytes},
        {"seconds", t.restore_seconds},
        {"mb_per_s", t.restore_seconds > 0 ? double(t.restored_bytes) / 1e6 / t.restore_seconds : 0.0}}},
  };
  return view;
}

}  // namespace llmesh::api
