// `llmesh bench`: measures any OpenAI/Anthropic-compatible server over HTTP
// (llmesh, llama.cpp, vLLM, SGLang). The work lives in src/bench/.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "apps/llmesh/commands.h"
#include "bench/bench_run.h"
#include "bench/report.h"
#include "core/error.h"

namespace llmesh::app {
namespace {

const char* const kBenchHelp = R"(
What a run does
  1. Asks the server for /v1/models (model id, context length), finds its cache flush
     endpoint (/flush_cache: llmesh, SGLang; /reset_prefix_cache: vLLM) and measures the chat
     template's overhead with one probe, so every prompt has exactly ISL tokens.
  2. Runs each point: warm-ups, cache flush, then the measured requests at concurrency C,
     each with a unique prompt of exactly ISL tokens and exactly OSL output tokens (ignore_eos
     + min_tokens). A point is INVALID when usage shows other lengths, failures, or cached
     tokens on a cold request. Points longer than the server's context are skipped.
     --also-warm adds a warm twin of every fixed point (prompts sent once before), reported
     in separate tables.
  3. Writes DIR/requests.jsonl (every request, every chunk's time) as it goes and rebuilds
     summary.csv, summary.jsonl, report.md and report.html (offline charts) after each point.
  Re-running with the same --out resumes: finished points are recomputed from their raw
  records, unfinished ones run again. Ctrl-C stops cleanly and keeps what was measured.

Modes (--mode, comma-separated; default quick)
  quick         1K->1 C1, 32K->1 C1, 128K->1 C1, 32K->1 C16, 1K->1K C1/C16/C32/C64,
                1K->4K C16, 128K->1K C1, 32K->1K C8
  sanity        4 small points that check a server end to end (same as --sanity)
  interference  1K->1K C32 x64 alone, then again with one 128K->1 prefill injected 5 s in;
                change in output tok/s and TTFT/TPOT/E2E p95, and the injected TTFT
  prefix        P cold, P warm, Q cold (32K), 3 repetitions: what the prefix cache buys
  needle        a fact at 5 depths of 4K and 32K contexts; pass/fail per depth
  sessions      8 agent sessions x 6 turns sharing an 8K system prefix, +1K-10K tool tokens
                and 500-1,500 generated tokens per turn, 0-3 s think time; per turn TTFT,
                cached tokens and reuse against the session's previous prompt
  soak          --sessions N (8) Claude-Code-shaped sessions for --duration (2h): tool results
                of 3K-15K tokens ending in a <system-reminder>, 2 parallel sub-agents every
                4 turns, auto-compaction near the context limit; samples the server's
                /metrics (RSS, KV blocks) every 10 s. Reports errors by kind, per-turn reuse
                (worst / p5 / median), TTFT and TPOT over time, the RSS slope, and whether
                KV blocks in use return to the baseline when idle (a leak otherwise)
  trace         replay --trace FILE (JSONL of session_id, turn, input_tokens, output_tokens,
                delay_s, shared_prefix_hash_ids: the `llmesh sim` format)
  --scale F multiplies lengths and request counts (e.g. 0.05 on a laptop CPU).

Scenario file (--scenarios; replaces --mode)
  TOML: [[point]] tables with kind ("fixed" default, "interference", "prefix_ab", "needle",
    "sessions", "trace"), name, isl, osl, concurrency, requests, warmups, cache ("cold"|"warm"),
    inject_isl, inject_osl, inject_after_s, repetitions, context_lengths, depths, sessions,
    turns, shared_prefix_tokens, tool_tokens_min/max, output_tokens_min/max, think_s_min/max,
    subagent_every_turns, subagent_turns, trace, trace_block_tokens, seed
  TSV: a header row naming columns among name isl osl concurrency requests warmups cache.

Examples
  llmesh bench run --url http://127.0.0.1:8080 --model-path models/qwen3-0.6b-q8_0.gguf \
      --sanity --out results/sanity
  llmesh bench run --url http://gpu-box:8000 --model Qwen/Qwen3-8B \
      --tokenizer ~/hf/Qwen3-8B --mode quick,interference --out results/vllm
  llmesh bench report results/vllm
  llmesh bench compare results/llmesh results/vllm
)";

std::atomic<bool> g_stop{false};

extern "C" void on_sigint(int) {
  // Second Ctrl-C: leave at once.
  if (g_stop.exchange(true)) std::_Exit(130);
}

std::string own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  for (char& c : s)
    if (c == '\0') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// "2h", "30m", "90s" or plain seconds.
double parse_duration_s(const std::string& text) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    fail("--duration: '{}' is not a duration (e.g. 2h, 30m, 90s)", text);
  }
  const std::string unit = text.substr(used);
  const double scale = unit == "h" ? 3600 : unit == "m" || unit == "min" ? 60 : unit == "s" || unit.empty() ? 1 : -1;
  check(scale > 0 && value > 0, "--duration: '{}' is not a duration (e.g. 2h, 30m, 90s)", text);
  return value * scale;
}

void write_out(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  CLI::App* bench =
      app.add_subcommand("bench", "Measure an OpenAI/Anthropic-compatible server (llmesh, vLLM, SGLang, llama.cpp)");
  bench->require_subcommand(1);
  bench->footer(kBenchHelp);

  auto options = std::make_shared<bench::BenchOptions>();
  auto api = std::make_shared<std::string>("openai");
  auto modes = std::make_shared<std::string>("quick");
  auto sanity = std::make_shared<bool>(false);
  auto model_path = std::make_shared<std::string>();
  CLI::App* run = bench->add_subcommand("run", "Run a benchmark and write a results folder");
  run->footer(kBenchHelp);
  run->add_option("--url", options->client.url, "Server base URL, e.g. http://127.0.0.1:8080")->required();
  run->add_option("--model", options->client.model, "Model name to send (default: the first of /v1/models)");
  run->add_option("--tokenizer", options->tokenizer_path, "The server's tokenizer: tokenizer.json or its folder");
  run->add_option("--model-path", *model_path,
                  "Or the model itself (.gguf / Hugging Face folder) to read the tokenizer from");
  run->add_option("--out", options->out_dir, "Results folder (re-using one resumes it)")->required();
  run->add_option("--mode", *modes, "Comma-separated: quick, sanity, interference, prefix, needle, sessions, soak, trace")
      ->capture_default_str();
  run->add_flag("--sanity", *sanity, "Run 4 quick points (same as --mode sanity)");
  run->add_option("--scenarios", options->scenarios_path, "Scenario file (TOML or TSV) replacing --mode");
  run->add_option("--trace", options->trace_path, "Trace JSONL for --mode trace");
  auto duration = std::make_shared<std::string>();
  run->add_option("--duration", *duration, "--mode soak: how long, e.g. 2h, 30m, 90s (default 2h)");
  run->add_option("--sessions", options->soak_sessions, "--mode soak: concurrent agent sessions (default 8)")
      ->check(CLI::PositiveNumber);
  run->add_option("--scale", options->scale, "Multiply lengths and request counts (e.g. 0.05)")->capture_default_str();
  run->add_option("--corpus", options->corpus_path,
                  "Text file prompts are cut from (default: words of the vocabulary)");
  run->add_option("--api", *api, "openai (chat completions) or anthropic (/v1/messages)")->capture_default_str();
  run->add_option("--api-key", options->client.api_key, "Sent as Bearer token and x-api-key");
  run->add_option("--timeout", options->client.timeout_s, "Per-request timeout, seconds")->capture_default_str();
  auto no_exact_output = std::make_shared<bool>(false);
  run->add_flag("--no-exact-output", *no_exact_output,
                "Do not send ignore_eos/min_tokens (servers that reject them); output lengths may then differ");
  run->add_flag("--also-warm", options->also_warm,
                "Also measure every fixed point warm (its prompts sent once before), in separate tables");
  run->add_flag("--strict", options->strict, "Exit with status 2 when a point is not valid");
  run->callback([=] {
    if (*api == "openai")
      options->client.api = bench::ApiKind::openai_chat;
    else if (*api == "anthropic")
      options->client.api = bench::ApiKind::anthropic_messages;
    else
      fail("--api must be openai or anthropic, got '{}'", *api);
    options->client.exact_output = !*no_exact_output;
    if (!duration->empty()) options->soak_duration_s = parse_duration_s(*duration);
    check(options->tokenizer_path.empty() || model_path->empty(), "give --tokenizer or --model-path, not both");
    if (options->tokenizer_path.empty()) options->tokenizer_path = *model_path;
    options->modes.clear();
    std::stringstream ss(*sanity ? std::string("sanity") : *modes);
    for (std::string mode; std::getline(ss, mode, ',');)
      if (!mode.empty()) options->modes.push_back(mode);
    check(!options->modes.empty(), "--mode is empty");
    options->command_line = own_command_line();
    options->llmesh_version = "0.1.0";
    std::signal(SIGINT, on_sigint);
    const int code = bench::run_bench(*options, g_stop);
    std::signal(SIGINT, SIG_DFL);
    if (code != 0) {
      std::fflush(stdout);
      std::exit(code);
    }
  });

  auto report_dir = std::make_shared<std::string>();
  CLI::App* report = bench->add_subcommand("report", "Rebuild the reports of a results folder from its raw records");
  report->add_option("dir", *report_dir, "Results folder")->required();
  report->callback([report_dir] {
    const auto results = bench::write_reports(*report_dir);
    write_out(fmt::format("{} point(s); wrote {}/report.md, report.html, summary.csv, summary.jsonl\n", results.size(),
                          *report_dir));
  });

  auto dir_a = std::make_shared<std::string>(), dir_b = std::make_shared<std::string>();
  CLI::App* compare = bench->add_subcommand("compare", "Compare two results folders point by point (B/A ratios)");
  compare->add_option("dir_a", *dir_a, "Results folder A")->required();
  compare->add_option("dir_b", *dir_b, "Results folder B")->required();
  compare->callback([dir_a, dir_b] { write_out(bench::compare_results(*dir_a, *dir_b)); });
}

}  // namespace llmesh::app
