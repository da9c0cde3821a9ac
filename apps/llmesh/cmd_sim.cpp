// `llmesh sim`: discrete-event simulation of a serving cluster under agent
// swarms; `llmesh sim fit`: step-time coefficients from measured points.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/llmesh/commands.h"
#include "core/error.h"
#include "sim/calibration_fit.h"
#include "sim/config.h"
#include "sim/report.h"
#include "sim/simulator.h"
#include "sim/sweep.h"

namespace llmesh::app {
namespace {

const char* const kSimHelp = R"(
Config file (TOML or JSON; every key optional, unknown keys are errors):
  [hardware]    num_gpus, memory_gb_per_gpu, memory_bandwidth_gb_per_s, flops_per_gpu_tflops,
                interconnect_gb_per_s, interconnect_latency_us
  [model]       total_params_b, active_params_b (MoE: < total), num_layers, hidden_size,
                attention_dim, kv_bytes_per_token, bytes_per_param; or plan_file = "plan.json" from
                `llmesh inspect --model M --plan --json --tp/--pp/--ep`: the shape, and the job's own traffic
  [deployment]  mode = "tp" | "dp_attention" | "disaggregated"
                  tp:            `replicas` independent workers of tp_size GPUs each
                  dp_attention:  groups of dp_size workers with experts spread over the group (EP);
                                 a group's workers are all in prefill or all in decode, and a step
                                 lasts as long as the slowest worker's part
                  disaggregated: per replica, prefill_workers (P) and decode_workers (D); KV moves
                                 P -> D at kv_transfer_gb_per_s; dp_size groups each pool
                tp_size, dp_size, replicas, prefill_workers, decode_workers, kv_transfer_gb_per_s
  [cache]       kv_capacity_tokens per worker (0: derived from memory and weights), memory_fraction,
                eviction = "lru" | "session_aware" (finished sessions first, queued sessions last),
                host_capacity_tokens (host/disk tier per worker, 0 = none), host_restore_gb_per_s
  [scheduler]   phase_policy = "prefill_first" | "decode_first" | "majority" | "prefill_interval",
                decision_tick_s (idle groups look for work on this grid), chunk_tokens (prefill
                budget per worker per step), max_running_requests, prefill_interval_steps
  [routing]     policy = "pinned" (consistent hashing with bounded load, sticky per session) |
                "round_robin" | "random" | "least_loaded" | "cache_aware";
                load_bound_factor, virtual_nodes, balance_threshold
  [workload]    kind = "swarm": num_agents, stagger_s, turns = [a, b], input_tokens = [a, b] (new per
                turn), output_tokens = [a, b], think_time_s = [a, b], shared_prefix_tokens,
                context_cap_tokens (compact when exceeded) with compact_to_tokens,
                subagent_probability, subagents_per_spawn, subagent_turns
                kind = "trace": trace = "file.jsonl" (docs/sim.md), trace_block_tokens
  [step_time]   model = "roofline" (mfu, bandwidth_efficiency, overhead_ms) | "calibrated"
                (calibration_file from `llmesh sim fit`)
  top level     name, seed

Outputs in --out: summary.json, workers.csv, turns.csv, timeline.csv, report.html (timeline:
prefill orange, decode blue, waiting red, idle grey). Utilization = (prefill + decode) / makespan
per worker; makespan = t=0 to the last token of the last turn. See docs/sim.md.

Examples:
  llmesh sim --config examples/sim/avalanche.toml --out out/avalanche
  llmesh sim --config examples/sim/avalanche.toml --set routing.policy=round_robin \
             --set scheduler.phase_policy=prefill_first --out out/rr
  llmesh sim --config examples/sim/avalanche.toml --sweep cache.kv_capacity_tokens=250000,500000
  llmesh sim fit --csv measured.csv --out calibration.json
)";

struct SimOptions {
  std::string config_path;
  std::string out_dir = "sim-out";
  std::vector<std::string> overrides;
  std::string sweep;
  int64_t seed = -1;
};

struct FitOptions {
  std::string csv_path;
  std::string out_path;
};

void run_sim(const SimOptions& options) {
  check(!options.config_path.empty(), "llmesh sim: --config FILE is required (see `llmesh sim --help`)");
  nlohmann::json tree = sim::load_config_tree(options.config_path);
  for (const std::string& assignment : options.overrides) sim::apply_override(tree, assignment);
  if (options.seed >= 0) tree["seed"] = options.seed;
  if (!options.sweep.empty()) {
    sim::SweepSpec spec = sim::parse_sweep(options.sweep);
    std::vector<sim::SweepPoint> points = sim::run_sweep(tree, spec);
    sim::write_sweep_report(spec, points, options.out_dir);
    std::fputs(sim::sweep_table_text(spec, points).c_str(), stdout);
    std::printf("wrote %s/sweep.csv and %s/sweep.html\n", options.out_dir.c_str(), options.out_dir.c_str());
    return;
  }
  sim::SimConfig config = sim::parse_config(tree);
  sim::SimResult result = sim::run_simulation(config);
  sim::write_report(config, result, options.out_dir);
  std::fputs(sim::summary_text(config, result).c_str(), stdout);
  std::printf("wrote %s/{summary.json,workers.csv,turns.csv,timeline.csv,report.html}\n", options.out_dir.c_str());
}

void run_fit(const FitOptions& options) {
  std::ifstream in(options.csv_path);
  check(in.good(), "llmesh sim fit: cannot open {}", options.csv_path);
  std::ostringstream text;
  text << in.rdbuf();
  sim::CalibrationFit fit = sim::fit_calibration(sim::parse_measured_steps_csv(text.str(), options.csv_path));
  std::string json = sim::calibration_json(fit).dump(2) + "\n";
  if (options.out_path.empty()) {
    std::fputs(json.c_str(), stdout);
  } else {
    sim::write_text_file(options.out_path, json);
    std::printf("wrote %s (%d prefill, %d decode points; max relative error %.2f%% / %.2f%%)\n",
                options.out_path.c_str(), fit.num_prefill_points, fit.num_decode_points,
                100 * fit.prefill_max_relative_error, 100 * fit.decode_max_relative_error);
  }
}

}  // namespace

void add_sim_command(CLI::App& app) {
  auto options = std::make_shared<SimOptions>();
  auto fit_options = std::make_shared<FitOptions>();
  CLI::App* sim = app.add_subcommand(
      "sim", "Simulate a serving cluster under agent swarms (utilization, cache hits, latency, timelines)");
  sim->footer(kSimHelp);
  sim->add_option("--config", options->config_path, "Simulation config (.toml or .json)");
  sim->add_option("--out", options->out_dir, "Output folder")->capture_default_str();
  sim->add_option("--set", options->overrides, "Override a config value: section.key=value (repeatable)");
  sim->add_option("--sweep", options->sweep,
                  "Run once per value: section.key=v1,v2,... (writes sweep.csv and sweep.html)");
  sim->add_option("--seed", options->seed, "Random seed (overrides the config's seed)");
  sim->require_subcommand(0, 1);

  CLI::App* fit = sim->add_subcommand(
      "fit", "Fit calibrated step-time coefficients from a CSV of measured steps (see docs/sim.md)");
  fit->add_option("--csv", fit_options->csv_path,
                  "Measured steps: phase,batch_size,new_tokens_per_seq,context_tokens_per_seq,seconds")
      ->required();
  fit->add_option("--out", fit_options->out_path, "Calibration JSON to write (default: stdout)");
  fit->callback([fit_options] { run_fit(*fit_options); });

  sim->callback([fit, options] {
    if (fit->parsed()) return;
    run_sim(*options);
  });
}

}  // namespace llmesh::app
