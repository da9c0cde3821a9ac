// Interference A/B: a decode background alone (A), then the same background
// with one long prefill injected inject_after_s after its first request was
// sent (B). Reports how B differs from A and the injected request's TTFT; when
// every background request had finished before the injection, there was no
// interference to measure and the result says BACKGROUND_FINISHED_BEFORE_INJECTION.
#include <fmt/format.h>

#include <cmath>
#include <thread>

#include "bench/analysis.h"
#include "bench/run_context.h"
#include "bench/stats.h"

namespace llmesh::bench {

using nlohmann::json;

void run_interference(RunContext& ctx, const PointSpec& spec) {
  ctx.store->mark_point_start(spec);
  const int64_t need = std::max(spec.isl + spec.osl, spec.inject_isl + spec.inject_osl);
  if (ctx.context_limit > 0 && need > ctx.context_limit) {
    ctx.store->mark_point_end(
        spec, {{"skipped", fmt::format("{} tokens exceed the server's context of {}", need, ctx.context_limit)}});
    return;
  }
  auto background = [&](const std::string& role) {
    return [&ctx, &spec, role](int64_t i, RequestRecord& r) {
      r.expected_prompt_tokens = spec.isl;
      return GenerationRequest{ctx.exact_user_messages(spec.isl, ctx.seed(spec, role, i)), spec.osl, true, false};
    };
  };
  if (spec.num_warmups > 0) ctx.run_requests(spec, "warmup", spec.num_warmups, spec.concurrency, background("warmup"));
  ctx.flush_cache();
  ctx.run_requests(spec, "background_alone", spec.num_requests, spec.concurrency, background("background_alone"));
  if (ctx.stopping()) return;
  ctx.flush_cache();

  // B: the injector thread sleeps until inject_after_s after B's start, then sends.
  const Clock::time_point b_start = Clock::now();
  std::thread injector([&] {
    const Clock::time_point at =
        b_start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(spec.inject_after_s));
    while (Clock::now() < at && !ctx.stopping()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (ctx.stopping()) return;
    std::shared_ptr<ServerClient> client = ctx.make_client();
    RequestRecord r;
    r.point_key = spec.key();
    r.role = "injected";
    r.expected_prompt_tokens = spec.inject_isl;
    GenerationRequest request{ctx.exact_user_messages(spec.inject_isl, ctx.seed(spec, "injected", 0)), spec.inject_osl,
                              true, false};
    client->generate(request, r, ctx.run_start, ctx.stop);
    ctx.store->append(r);
  });
  ctx.run_requests(spec, "background_mixed", spec.num_requests, spec.concurrency, background("background_mixed"));
  injector.join();
  if (ctx.stopping()) return;
  ctx.store->mark_point_end(spec, json::object());
}

static json relative_change(double before, double after) {
  if (!std::isfinite(before) || !std::isfinite(after) || before == 0) return json();
  return after / before - 1.0;
}

json analyze_interference(const StoredPoint& point) {
  const PointSpec& spec = point.spec;
  const std::vector<RequestRecord> alone = records_with_role(point, "background_alone");
  const std::vector<RequestRecord> mixed = records_with_role(point, "background_mixed");
  const std::vector<RequestRecord> injected = records_with_role(point, "injected");
  json result = {{"isl", spec.isl},
                 {"osl", spec.osl},
                 {"concurrency", spec.concurrency},
                 {"cache", "cold"},
                 {"invalid_reasons", json::array()},
                 {"notes", json::array()}};
  const LoadMetrics a = load_metrics(alone), b = load_metrics(mixed);
  result["metrics"] = to_json(b);
  result["alone"] = to_json(a);
  result["with_injection"] = to_json(b);
  check_records(alone, true, result);
  check_records(mixed, true, result);
  check_records(injected, true, result);

  json ab = {{"output_tokens_per_s_change", relative_change(a.output_tokens_per_s, b.output_tokens_per_s)},
             {"ttft_p95_change", relative_change(a.ttft_ms.p95, b.ttft_ms.p95)},
             {"tpot_p95_change", relative_change(a.tpot_ms.p95, b.tpot_ms.p95)},
             {"e2e_p95_change", relative_change(a.e2e_ms.p95, b.e2e_ms.p95)}};
  if (injected.empty() || !injected.front().ok) {
    ab["status"] = "INJECTION_FAILED";
  } else {
    const RequestRecord& inj = injected.front();
    double background_end_s = -1;
    for (const RequestRecord& r : mixed) background_end_s = std::max(background_end_s, r.send_s + r.end_s);
    ab["injected_ttft_ms"] = ttft_ms(inj);
    ab["injected_e2e_ms"] = e2e_ms(inj);
    ab["injected_prompt_tokens"] = inj.prompt_tokens;
    if (inj.send_s >= background_end_s) {
      ab["status"] = "BACKGROUND_FINISHED_BEFORE_INJECTION";
      for (const char* k : {"output_tokens_per_s_change", "ttft_p95_change", "tpot_p95_change", "e2e_p95_change"})
        ab[k] = json();
      result["notes"].push_back(fmt::format(
          "BACKGROUND_FINISHED_BEFORE_INJECTION: the background ended {:.1f} s after its start, the injection came at "
          "{:.1f} s; use more background requests or a smaller inject_after_s",
          background_end_s - (mixed.empty() ? 0 : mixed.front().send_s), spec.inject_after_s));
    } else {
      ab["status"] = "OVERLAPPED";
    }
  }
  result["interference"] = ab;
  return result;
}

}  // namespace llmesh::bench
