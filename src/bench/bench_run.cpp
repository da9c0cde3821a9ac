#include "bench/bench_run.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "bench/analysis.h"
#include "bench/report.h"
#include "bench/results_store.h"
#include "bench/run_context.h"
#include "bench/scenario.h"
#include "core/error.h"

namespace llmesh::bench {

using nlohmann::json;

namespace {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

std::string read_text_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  check(in.good(), "{} {}: cannot open", what, path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Prompt tokens the chat template adds around one user message, from a probe
// whose content length is known.
int64_t measure_chat_overhead(RunContext& ctx) {
  constexpr int64_t kProbeTokens = 16;
  ClientOptions patient = ctx.client_options;  // the probe is not a measurement: no tight timeout
  patient.timeout_s = std::max(patient.timeout_s, 120.0);
  ServerClient client(patient);
  RequestRecord r;
  GenerationRequest probe{
      json::array({{{"role", "user"}, {"content", ctx.prompts->text_of_tokens(kProbeTokens, ctx.run_nonce)}}}), 1, true,
      false};
  client.generate(probe, r, ctx.run_start, ctx.stop);
  check(r.ok, "probe request to {} failed: {}", ctx.client_options.url, r.error);
  check(r.prompt_tokens > 0, "the server's answer has no usage.prompt_tokens: exact lengths cannot be verified");
  return r.prompt_tokens - kProbeTokens;
}

}  // namespace

std::vector<PointSpec> planned_points(const BenchOptions& o) {
  std::vector<PointSpec> points;
  if (!o.scenarios_path.empty()) {
    points = load_scenario_file(o.scenarios_path);
  } else {
    for (const std::string& mode : o.modes) {
      if (mode == "quick") {
        for (PointSpec& p : quick_map_points()) points.push_back(p);
      } else if (mode == "sanity") {
        for (PointSpec& p : sanity_points()) points.push_back(p);
      } else {
        PointSpec p = mode_point(mode, o.trace_path);
        if (p.kind == "soak") {
          if (o.soak_duration_s > 0) p.duration_s = o.soak_duration_s;
          if (o.soak_sessions > 0) p.num_sessions = o.soak_sessions;
          p.name = default_name(p);
        }
        points.push_back(p);
      }
    }
  }
  if (o.also_warm) {
    std::vector<PointSpec> with_warm;
    for (const PointSpec& p : points) {
      with_warm.push_back(p);
      if (p.kind != "fixed" || p.cache == "warm") continue;
      PointSpec warm = p;
      warm.cache = "warm";
      if (!warm.name.empty()) warm.name += " warm";
      with_warm.push_back(warm);
    }
    points = std::move(with_warm);
  }
  // Scaling can make two points identical (and a scenario may repeat one): run each once.
  std::vector<PointSpec> unique;
  for (const PointSpec& p : points) {
    const PointSpec s = scaled(p, o.scale);
    bool seen = false;
    for (const PointSpec& u : unique) seen = seen || u.key() == s.key();
    if (seen)
      std::fprintf(stderr, "llmesh bench: point '%s' is the same as an earlier one; measured once\n", s.name.c_str());
    else
      unique.push_back(s);
  }
  return unique;
}

int run_bench(const BenchOptions& options, std::atomic<bool>& stop) {
  check(!options.out_dir.empty(), "--out DIR is required");
  check(!options.tokenizer_path.empty(),
        "bench needs the server's tokenizer for exact prompt lengths: pass --tokenizer (tokenizer.json or its folder) "
        "or --model-path (.gguf or Hugging Face folder)");
  const std::vector<PointSpec> points = planned_points(options);

  RunContext ctx;
  ctx.client_options = options.client;
  ctx.run_start = Clock::now();
  ctx.run_nonce =
      std::random_device{}() ^ static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  ctx.stop = &stop;
  ProgressLine progress;
  ctx.progress = &progress;

  std::string corpus;
  if (!options.corpus_path.empty()) corpus = read_text_file(options.corpus_path, "--corpus");
  ctx.prompts = std::make_shared<PromptBuilder>(load_tokenizer(options.tokenizer_path), corpus);

  ClientOptions patient = ctx.client_options;
  patient.timeout_s = std::max(patient.timeout_s, 120.0);
  ServerClient probe_client(patient);
  const json models = probe_client.models();
  if (ctx.client_options.model.empty()) {
    check(models.is_object() && models.contains("data") && !models["data"].empty(),
          "{}: /v1/models did not answer (is the server running? without /v1/models, pass --model NAME)",
          ctx.client_options.url);
    ctx.client_options.model = models["data"][0].value("id", "");
  }
  ctx.context_limit = ServerClient::context_limit(models);
  ctx.flush_endpoint = probe_client.flush_prefix_cache();
  ctx.chat_overhead_tokens = measure_chat_overhead(ctx);

  // A resumed folder keeps its first start time; a different server or model is worth a warning.
  json previous_manifest;
  if (std::ifstream in(options.out_dir + "/run_manifest.json"); in.good())
    previous_manifest = json::parse(in, nullptr, false);
  if (previous_manifest.is_object() && (previous_manifest.value("url", "") != ctx.client_options.url ||
                                        previous_manifest.value("model", "") != ctx.client_options.model))
    std::fprintf(stderr,
                 "llmesh bench: warning: %s was measured against %s (model %s); resuming it against %s (model %s)\n",
                 options.out_dir.c_str(), previous_manifest.value("url", "?").c_str(),
                 previous_manifest.value("model", "?").c_str(), ctx.client_options.url.c_str(),
                 ctx.client_options.model.c_str());
  ResultsStore store(options.out_dir);
  ctx.store = &store;
  const std::string start_time = utc_now();
  json manifest = {{"command_line", options.command_line},
                   {"url", ctx.client_options.url},
                   {"model", ctx.client_options.model},
                   {"api", ctx.client_options.api == ApiKind::anthropic_messages ? "anthropic" : "openai"},
                   {"server_models", models},
                   {"context_limit", ctx.context_limit},
                   {"flush_endpoint", ctx.flush_endpoint.empty() ? "none (unique prompts only)" : ctx.flush_endpoint},
                   {"chat_overhead_tokens", ctx.chat_overhead_tokens},
                   {"llmesh_version", options.llmesh_version},
                   {"host", host_name()},
                   {"start_time", start_time},
                   {"first_start_time", previous_manifest.is_object() && store.num_resumed_points() > 0
                                            ? previous_manifest.value("first_start_time", start_time)
                                            : start_time},
                   {"scale", options.scale},
                   {"resumed_points", store.num_resumed_points()},
                   {"points", json::array()}};
  for (const PointSpec& p : points) manifest["points"].push_back(to_json(p));
  auto write_manifest = [&] {
    std::ofstream out(options.out_dir + "/run_manifest.json", std::ios::trunc);
    out << manifest.dump(2) << '\n';
  };
  write_manifest();

  // Ctrl-C: a watcher closes every open connection so long prefills do not block the exit.
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done.load()) {
      if (stop.load()) ctx.abort_all_clients();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });

  std::fprintf(stdout, "llmesh bench: %s, model %s, context %lld, %zu points, results in %s\n",
               ctx.client_options.url.c_str(), ctx.client_options.model.c_str(),
               static_cast<long long>(ctx.context_limit), points.size(), options.out_dir.c_str());
  std::fflush(stdout);
  bool any_invalid = false;
  try {
    for (size_t i = 0; i < points.size() && !stop.load(); ++i) {
      const PointSpec& spec = points[i];
      const std::string label = fmt::format("[{}/{}] {}", i + 1, points.size(), spec.name);
      if (store.is_finished(spec.key())) {
        std::fprintf(stdout, "%s: finished in an earlier run, recomputed from its records\n", label.c_str());
        continue;
      }
      progress.set_point(label);
      run_point(ctx, spec);
      progress.clear();
      if (stop.load()) break;
      // One line per point on stdout, from the same analysis the reports use.
      StoredRun run = load_requests_file(store.requests_path());
      const json result = analyze_point(run.points[spec.key()]);
      const bool valid = result.value("valid", false);
      any_invalid = any_invalid || (!valid && !result.contains("skipped"));
      std::string line = fmt::format("{}: {}", label,
                                     result.contains("skipped") ? "skipped"
                                     : valid                    ? "valid"
                                                                : "INVALID");
      if (result.contains("metrics")) {
        const json& m = result["metrics"];
        auto p = [&](const char* metric, const char* stat) {
          const json& v = m[metric][stat];
          return v.is_number() ? fmt::format("{:.1f}", v.get<double>()) : std::string("–");
        };
        line += fmt::format("  ok {}/{}  out {:.1f} tok/s  TTFT p50 {} ms  TPOT p50 {} ms  E2E p95 {} ms",
                            m.value("num_ok", 0), m.value("num_requests", 0), m.value("output_tokens_per_s", 0.0),
                            p("ttft_ms", "p50"), p("tpot_ms", "p50"), p("e2e_ms", "p95"));
      }
      for (const json& why : result["invalid_reasons"]) line += "\n    " + why.get<std::string>();
      if (result.contains("skipped")) line += "\n    " + result["skipped"].get<std::string>();
      std::fprintf(stdout, "%s\n", line.c_str());
      std::fflush(stdout);
      write_reports(options.out_dir);
    }
  } catch (...) {
    done = true;
    watcher.join();
    throw;
  }
  done = true;
  watcher.join();
  progress.clear();

  manifest["end_time"] = utc_now();
  manifest["stopped"] = stop.load();
  write_manifest();
  const std::vector<json> results = write_reports(options.out_dir);
  int64_t num_failed_requests = 0;
  for (const json& r : results)
    if (r.contains("metrics")) num_failed_requests += r["metrics"].value("num_failed", int64_t{0});
  std::fprintf(stdout, "%sreport: %s/report.md (and report.html, summary.csv, summary.jsonl); %lld failed request(s)\n",
               stop.load() ? "stopped by Ctrl-C; what was measured is kept. " : "", options.out_dir.c_str(),
               static_cast<long long>(num_failed_requests));
  if (stop.load()) return 130;
  return options.strict && any_invalid ? 2 : 0;
}

}  // namespace llmesh::bench
