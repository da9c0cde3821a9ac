// Prefix-cache A/B, `repetitions` times: flush, prompt P (cold), P again
// (warm: should be served from the cache), then Q of the same length with other
// content (cold: must find nothing cached although P is). Reports TTFT of each
// and the cold/warm speed-up.
#include <fmt/format.h>

#include <cmath>

#include "bench/analysis.h"
#include "bench/run_context.h"
#include "bench/stats.h"

namespace llmesh::bench {

using nlohmann::json;

void run_prefix_ab(RunContext& ctx, const PointSpec& spec) {
  ctx.store->mark_point_start(spec);
  if (ctx.context_limit > 0 && spec.isl + 1 > ctx.context_limit) {
    ctx.store->mark_point_end(
        spec, {{"skipped", fmt::format("ISL {} exceeds the server's context of {}", spec.isl, ctx.context_limit)}});
    return;
  }
  json notes = json::array();
  if (ctx.flush_endpoint.empty())
    notes.push_back("no cache flush endpoint: P cold relies on a fresh prompt per repetition");
  std::shared_ptr<ServerClient> client = ctx.make_client();
  if (ctx.progress != nullptr) ctx.progress->set_phase("P cold, P warm, Q cold", 3 * spec.repetitions);
  for (int64_t rep = 0; rep < spec.repetitions && !ctx.stopping(); ++rep) {
    ctx.flush_cache();
    const json p = ctx.exact_user_messages(spec.isl, ctx.seed(spec, "p", rep));
    const json q = ctx.exact_user_messages(spec.isl, ctx.seed(spec, "q", rep));
    for (const auto& [role, messages] : {std::pair{"p_cold", &p}, {"p_warm", &p}, {"q_cold", &q}}) {
      if (ctx.stopping()) break;
      RequestRecord r;
      r.point_key = spec.key();
      r.role = role;
      r.index = rep;
      r.expected_prompt_tokens = spec.isl;
      client->generate(GenerationRequest{*messages, 1, true, false}, r, ctx.run_start, ctx.stop);
      ctx.store->append(r);
      if (ctx.progress != nullptr) ctx.progress->request_done(r.ok);
    }
  }
  if (ctx.stopping()) return;
  ctx.store->mark_point_end(spec, {{"notes", notes}});
}

json analyze_prefix_ab(const StoredPoint& point) {
  json result = {{"isl", point.spec.isl}, {"osl", 1}, {"invalid_reasons", json::array()}, {"notes", json::array()}};
  json roles = json::object();
  double cold_p50 = NAN, warm_p50 = NAN;
  for (const char* role : {"p_cold", "p_warm", "q_cold"}) {
    const std::vector<RequestRecord> records = records_with_role(point, role);
    check_records(records, std::string(role) != "p_warm", result);
    std::vector<double> ttft, cached_share;
    int64_t cached_sum = 0;
    for (const RequestRecord& r : records) {
      if (!r.ok) continue;
      ttft.push_back(ttft_ms(r));
      cached_sum += std::max<int64_t>(r.cached_tokens, 0);
      if (r.prompt_tokens > 0)
        cached_share.push_back(static_cast<double>(std::max<int64_t>(r.cached_tokens, 0)) /
                               static_cast<double>(r.prompt_tokens));
    }
    const Distribution d = distribution_of(ttft);
    roles[role] = {{"ttft_ms", to_json(d)},
                   {"cached_tokens_mean", records.empty() ? json() : json(double(cached_sum) / double(records.size()))},
                   {"cached_share_mean", to_json(distribution_of(cached_share))["mean"]}};
    if (std::string(role) == "p_cold") cold_p50 = d.p50;
    if (std::string(role) == "p_warm") {
      warm_p50 = d.p50;
      int64_t misses = 0;
      for (const RequestRecord& r : records)
        if (r.ok && r.cached_tokens == 0) ++misses;
      if (misses > 0)
        result["invalid_reasons"].push_back(fmt::format("{} warm repeat(s) of P found nothing cached", misses));
    }
  }
  result["prefix_ab"] = roles;
  result["warm_speedup_p50"] =
      std::isfinite(cold_p50) && std::isfinite(warm_p50) && warm_p50 > 0 ? json(cold_p50 / warm_p50) : json();
  if (static_cast<int64_t>(records_with_role(point, "p_cold").size()) < point.spec.repetitions && point.finished)
    result["invalid_reasons"].push_back("fewer repetitions recorded than asked");
  return result;
}

}  // namespace llmesh::bench
