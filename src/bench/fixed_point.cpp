// Fixed points: ISL -> OSL at concurrency C. Warm-ups first (their prompts are
// never measured), then either
//   cold: flush the prefix cache and send unique prompts; a measured request
//         that reports cached tokens makes the point invalid;
//   warm: send each measured prompt once (role "prime", max_tokens 1), then
//         measure the same prompts again; reported separately, never mixed.
#include <fmt/format.h>

#include "bench/analysis.h"
#include "bench/run_context.h"
#include "bench/stats.h"

namespace llmesh::bench {

using nlohmann::json;

// A note when the point cannot run against this server; "" when it can.
static std::string skip_reason(const RunContext& ctx, int64_t isl, int64_t osl) {
  if (ctx.context_limit > 0 && isl + osl > ctx.context_limit)
    return fmt::format("ISL {} + OSL {} exceeds the server's context of {} tokens", isl, osl, ctx.context_limit);
  if (isl <= ctx.chat_overhead_tokens)
    return fmt::format("ISL {} is not above the chat template's {} tokens", isl, ctx.chat_overhead_tokens);
  return "";
}

// Warm-ups at the point's concurrency, each with its own prompt.
static void run_warmups(RunContext& ctx, const PointSpec& spec) {
  if (spec.num_warmups <= 0) return;
  ctx.run_requests(spec, "warmup", spec.num_warmups, spec.concurrency, [&](int64_t i, RequestRecord& r) {
    r.expected_prompt_tokens = spec.isl;
    return GenerationRequest{ctx.exact_user_messages(spec.isl, ctx.seed(spec, "warmup", i)), spec.osl, true, false};
  });
}

void run_fixed_point(RunContext& ctx, const PointSpec& spec) {
  ctx.store->mark_point_start(spec);
  if (std::string why = skip_reason(ctx, spec.isl, spec.osl); !why.empty()) {
    ctx.store->mark_point_end(spec, {{"skipped", why}});
    return;
  }
  json notes = json::array();
  run_warmups(ctx, spec);
  const bool warm = spec.cache == "warm";
  if (!ctx.flush_cache()) notes.push_back("the server has no cache flush endpoint: cold relies on unique prompts only");
  if (warm) {
    ctx.run_requests(spec, "prime", spec.num_requests, spec.concurrency, [&](int64_t i, RequestRecord& r) {
      return GenerationRequest{ctx.exact_user_messages(spec.isl, ctx.seed(spec, "measured", i)), 1, true, false};
    });
  }
  ctx.run_requests(spec, "measured", spec.num_requests, spec.concurrency, [&](int64_t i, RequestRecord& r) {
    r.expected_prompt_tokens = spec.isl;
    return GenerationRequest{ctx.exact_user_messages(spec.isl, ctx.seed(spec, "measured", i)), spec.osl, true, false};
  });
  if (ctx.stopping()) return;
  ctx.store->mark_point_end(spec, {{"notes", notes}, {"chat_overhead_tokens", ctx.chat_overhead_tokens}});
}

json analyze_fixed(const StoredPoint& point) {
  const PointSpec& spec = point.spec;
  const std::vector<RequestRecord> measured = records_with_role(point, "measured");
  json result = {{"isl", spec.isl},
                 {"osl", spec.osl},
                 {"concurrency", spec.concurrency},
                 {"cache", spec.cache},
                 {"invalid_reasons", json::array()},
                 {"notes", json::array()}};
  result["metrics"] = to_json(load_metrics(measured));
  check_records(measured, spec.cache == "cold", result);
  if (spec.cache == "warm") {
    int64_t num_uncached = 0;
    for (const RequestRecord& r : measured)
      if (r.ok && r.cached_tokens == 0) ++num_uncached;
    if (num_uncached > 0)
      result["invalid_reasons"].push_back(fmt::format("{} warm request(s) found nothing cached", num_uncached));
  }
  if (int64_t n = static_cast<int64_t>(measured.size()); point.finished && n < spec.num_requests)
    result["invalid_reasons"].push_back(fmt::format("{} of {} measured requests recorded", n, spec.num_requests));
  return result;
}

}  // namespace llmesh::bench
