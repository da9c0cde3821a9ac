#include "api/console_views.h"

#include <fmt/format.h>

#include "console/metrics_history.h"
#include "core/host_memory.h"
#include "kernels/ops.h"
#include "runtime/model_summary.h"

namespace llmesh::api {

using nlohmann::json;

namespace {

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec);
}

json usage(int64_t used, int64_t total) { return {{"used_bytes", used}, {"total_bytes", total}}; }

std::string node_id(const ServerContext& ctx) { return fmt::format("serve@{}:{}", host_name(), ctx.port); }

json nodes_view(const ServerContext& ctx) {
  const std::string host = host_name();
  json node = {
      {"id", node_id(ctx)},
      {"name", host},
      {"host", host},
      {"url", nullptr},
      {"role", "serve"},
      {"kind", "llmesh"},
      {"state", !ctx.ready.load()      ? "loading"
                : ctx.failed.load()  ? "failed"
                : ctx.draining.load() ? "draining"
                                      : "up"},
      {"last_seen", console::unix_seconds_now()},
      {"started_at", ctx.started_at},
      {"device", "cpu"},
      {"kernels", kernels::backend_name()},
      {"threads", ctx.num_compute_threads},
      {"models", json::array({ctx.options.served_model_name})},
      {"error", nullptr},
  };
  json memory = {{"rss_bytes", int64_t(resident_memory_bytes())}};
  if (ctx.ready.load()) {
    const engine::EngineStats s = ctx.engine->stats();
    const int64_t block_bytes =
        ctx.engine->kv_bytes_per_token() * ctx.engine->kv_cache_tokens() / std::max<int64_t>(1, s.num_blocks_total);
    json pool = usage(s.num_blocks_used * block_bytes, s.num_blocks_total * block_bytes);
    pool["used_blocks"] = s.num_blocks_used;
    pool["total_blocks"] = s.num_blocks_total;
    pool["cached_blocks"] = s.num_blocks_cached;
    memory["weights_bytes"] = int64_t(ctx.model->files.weights.file_bytes());
    memory["kv_pool"] = std::move(pool);
    const bool host_tier = s.has_tiers && s.tiers.host.budget_bytes > 0;
    memory["host_tier"] = host_tier ? usage(s.tiers.host.bytes, s.tiers.host.budget_bytes) : json(nullptr);
    const bool disk_tier = s.has_tiers && s.tiers.has_disk;
    memory["disk_tier"] = disk_tier ? usage(s.tiers.disk.bytes, s.tiers.disk.budget_bytes) : json(nullptr);
    node["requests"] = {{"running", s.num_running}, {"waiting", s.num_waiting}};
  } else {
    memory["weights_bytes"] = nullptr;
    memory["kv_pool"] = nullptr;
    memory["host_tier"] = nullptr;
    memory["disk_tier"] = nullptr;
    node["requests"] = {{"running", 0}, {"waiting", 0}};
  }
  node["memory"] = std::move(memory);
  return {{"nodes", json::array({std::move(node)})}};
}

// Whether a library model fits: its weights and 4K tokens of KV in the RAM
// available now, plus what the loaded model's weights would give back.
json fit_fields(const runtime::LibraryModel& m, int64_t reclaimable_bytes) {
  constexpr int64_t kFitTokens = 4096;
  const double gib = double(1ull << 30);
  const int64_t available = int64_t(available_memory_bytes()) + reclaimable_bytes;
  const int64_t kv = m.kv_bytes_per_token * std::min<int64_t>(kFitTokens, m.context_tokens > 0 ? m.context_tokens : kFitTokens);
  const bool fits = m.size_bytes + kv <= available;
  return {{"fits", fits},
          {"fit", fmt::format("weights {:.2f} GiB + 4K tokens of KV ({:.2f} GiB) {} {:.1f} GiB available",
                              double(m.size_bytes) / gib, double(kv) / gib, fits ? "in" : "exceed", double(available) / gib)}};
}

json models_view(const ServerContext& ctx) {
  json loaded = json::array();
  int64_t loaded_bytes = 0;
  if (ctx.ready.load()) {
    const runtime::LoadedModel& m = *ctx.model;
    const runtime::ModelSummary summary = runtime::summarize(m.files);
    loaded_bytes = summary.weight_bytes;
    loaded.push_back({
        {"name", ctx.options.served_model_name},
        {"node", node_id(ctx)},
        {"path", m.files.path},
        {"format", m.files.format},
        {"architecture", m.config().arch},
        {"quantization", summary.quantization},
        {"parameters_total", summary.num_parameters},
        {"parameters_active", summary.num_active_parameters},
        {"context_tokens", ctx.engine->context_tokens()},
        {"kv_dtype", dtype_name(ctx.engine->kv_dtype())},
        {"kv_bytes_per_token", ctx.engine->kv_bytes_per_token()},
        {"weights_bytes", summary.weight_bytes},
    });
  }
  json library = nullptr;
  if (ctx.library) {
    json models = json::array();
    for (const runtime::LibraryModel& m : ctx.library->scan()) {
      json entry = {{"name", m.name}, {"path", m.path}, {"format", m.format}, {"size_bytes", m.size_bytes},
                    {"loaded", ctx.ready.load() && same_file(m.path, ctx.model->files.path)}};
      if (!m.error.empty()) {
        entry["error"] = m.error;
      } else {
        entry.update({{"architecture", m.architecture},
                      {"quantization", m.quantization},
                      {"parameters_total", m.num_parameters},
                      {"parameters_active", m.num_active_parameters},
                      {"context_tokens", m.context_tokens}});
        entry.update(fit_fields(m, loaded_bytes));
      }
      models.push_back(std::move(entry));
    }
    library = {{"dir", ctx.library->dir()}, {"models", std::move(models)}};
  }
  return {{"loaded", std::move(loaded)}, {"library", std::move(library)}};
}

}  // namespace

console::ConsoleViews serve_console_views(ServerContext& ctx) {
  console::ConsoleViews v;
  v.nodes = [&ctx] { return nodes_view(ctx); };
  v.models = [&ctx] { return models_view(ctx); };
  v.requests = [&ctx](size_t limit) { return ctx.requests.list(limit); };
  v.request = [&ctx](const std::string& id) { return ctx.requests.find(id); };
  return v;  // history: the owner's MetricsHistory
}

json ServeHistorySampler::operator()() {
  if (!ctx_.ready.load()) return nullptr;
  const engine::EngineStats s = ctx_.engine->stats();
  const double now = console::unix_seconds_now();
  if (!has_previous_) {  // against zero counters: the first sample holds what ran since the model loaded
    previous_at_ = now - 1.0;
    has_previous_ = true;
  }
  const double dt = std::max(1e-3, now - previous_at_);
  const int64_t queried = s.prefix_queried_tokens - previous_.prefix_queried_tokens;
  const int64_t hit = s.prefix_hit_tokens - previous_.prefix_hit_tokens;
  evictions_.push_back(s.num_evicted_blocks - previous_.num_evicted_blocks);
  if (evictions_.size() > 60) evictions_.erase(evictions_.begin());
  int64_t evictions_last_minute = 0;
  for (int64_t e : evictions_) evictions_last_minute += e;
  json sample = {
      {"prompt_tokens_per_s", double(s.prompt_tokens - previous_.prompt_tokens) / dt},
      {"output_tokens_per_s", double(s.generation_tokens - previous_.generation_tokens) / dt},
      {"running", s.num_running},
      {"waiting", s.num_waiting},
      {"cache_hit_rate", queried > 0 ? json(double(hit) / double(queried)) : json(nullptr)},
      {"evictions_per_min", evictions_last_minute},
      {"kv_blocks",
       {{"pool_used", s.num_blocks_used},
        {"pool_cached", s.num_blocks_cached},
        {"pool_total", s.num_blocks_total},
        {"host", s.tiers.host.blocks},
        {"disk", s.tiers.disk.blocks}}},
  };
  previous_ = s;
  sample.update(console::recent_ttft_fields(ctx_.requests, now));
  previous_at_ = now;
  return sample;
}

}  // namespace llmesh::api
