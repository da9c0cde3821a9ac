// `llmesh serve`: the OpenAI-compatible server. Listens first (so /health can
// answer 503 while the model loads), then loads the model, starts the engine
// and opens the model endpoints.
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <thread>

#include "api/server.h"
#include "apps/llmesh/commands.h"
#include "apps/llmesh/shutdown_signals.h"
#include "core/error.h"
#include "core/host_memory.h"
#include "core/log.h"
#include "core/thread_pool.h"
#include "dist/parallel_plan.h"
#include "dist/sharded_executor.h"
#include "engine/engine.h"
#include "runtime/loaded_model.h"
#include "kernels/ops.h"
#include "model/model.h"
#include "kv/kv_pool.h"

namespace llmesh::app {

namespace {

struct ServeOptions {
  std::string model_path;
  dist::ParallelOptions parallel;
  std::string weights = "auto";
  api::ServerOptions server;
  engine::EngineOptions engine;
  double kv_cache_mem_gib = 0.0;
  double kv_host_gib = -1.0;  // < 0: a quarter of the RAM left after weights and pool
  std::string kv_disk_dir;
  double kv_disk_gib = 0.0;   // 0: half the free disk space, at most 64 GiB
  double max_body_mib = 16.0;
  int threads = 0;
  bool no_prefix_cache = false;
  double drain_timeout_s = 30.0;
  RopeScalingFlags rope;
};

std::string default_model_name(const std::string& path) {
  std::filesystem::path p(path);
  while (!p.empty() && p.filename().empty()) p = p.parent_path();  // "dir/" -> "dir"
  std::string name = p.filename().string();
  if (name.size() > 5 && name.ends_with(".gguf")) name.resize(name.size() - 5);
  return name.empty() ? "model" : name;
}

double gib(double bytes) { return bytes / double(1ull << 30); }

// The tiers' budgets: explicit ones as given, defaults from what this machine has left.
kv::KvTierOptions tier_options(const ServeOptions& o, int64_t pool_bytes) {
  kv::KvTierOptions t;
  if (o.kv_host_gib >= 0) {
    t.host_bytes = int64_t(o.kv_host_gib * double(1ull << 30));
  } else {
    const int64_t left = int64_t(available_memory_bytes()) - pool_bytes;
    t.host_bytes = std::max<int64_t>(0, left / 4);
  }
  if (!o.kv_disk_dir.empty()) {
    t.disk_dir = o.kv_disk_dir;
    if (t.disk_dir.starts_with("~/") && std::getenv("HOME")) t.disk_dir = std::getenv("HOME") + t.disk_dir.substr(1);
    t.disk_bytes = o.kv_disk_gib > 0 ? int64_t(o.kv_disk_gib * double(1ull << 30))
                                     : std::min<int64_t>(int64_t(free_disk_bytes(t.disk_dir) / 2), int64_t(64) << 30);
  }
  return t;
}

void print_tiers(const engine::EngineStats& s, const ServeOptions& o) {
  const kv::KvTierStats& t = s.tiers;
  std::printf("  KV host tier: %.3f GiB%s", gib(double(t.host.budget_bytes)),
              t.host.budget_bytes > 0 ? " (evicted blocks wait here for their session's next turn)" : " (off)");
  if (o.kv_disk_dir.empty()) {
    std::printf("; disk tier off (--kv-disk-dir DIR keeps sessions across restarts)\n");
  } else if (!t.has_disk) {
    std::printf("; disk tier off: %s is not usable (see the warning above)\n", o.kv_disk_dir.c_str());
  } else {
    const kv::DiskRecovery& r = t.disk_recovery;
    std::printf("\n  KV disk tier: %s, %.3f GiB; recovered %lld blocks (%.3f GiB) in %.2f s", t.disk_dir.c_str(),
                gib(double(t.disk.budget_bytes)), (long long)r.blocks, gib(double(r.bytes)), r.seconds);
    if (r.truncated + r.corrupt + r.foreign + r.evicted > 0)
      std::printf("; skipped %lld truncated, %lld corrupt, %lld of another model; %lld over the budget deleted",
                  (long long)r.truncated, (long long)r.corrupt, (long long)r.foreign, (long long)r.evicted);
    std::printf("\n");
  }
}

// After the last response: the blocks still queued for the disk tier reach
// it, so the next start recovers the whole of every session.
void flush_kv_tier_writes(engine::Engine& engine) {
  const engine::EngineStats last_step = engine.stats();
  if (last_step.has_tiers && last_step.tiers.has_disk && last_step.tiers.disk.queue_blocks > 0) {
    std::printf("llmesh serve: finishing the disk tier's queued writes\n");
    std::fflush(stdout);
  }
  engine.flush_tier_writes();
}

// Rank 0 of a job that lost a rank (its executor broke: the failed step's
// requests already got errors): /health goes 503, the disk tier gets what is
// queued for it, and the whole job ends (MPI_Abort; mpirun exits non-zero) for
// a supervisor to restart.
void end_lost_job(dist::Job& job, api::ApiServer& server, engine::Engine& engine) {
  const std::optional<std::string> why = job.wait_until_lost();
  if (!why) return;
  server.set_failed("This server's multi-rank job lost a rank and is ending: " + *why);
  log_error("the job lost a rank; ending it in 2 s: {}", *why);
  std::this_thread::sleep_for(std::chrono::seconds(2));  // the failed requests' responses go out
  engine.flush_tier_writes();
  job.world().abort(3);
}

void run_serve(ServeOptions o) {
  std::signal(SIGPIPE, SIG_IGN);  // a client that hangs up must not kill the server
  install_shutdown_signals();     // before any thread starts (MPI's too): they all inherit the blocked signals
  std::unique_ptr<dist::Job> job = dist::Job::start(o.parallel);
  if (job && !job->serves()) {
    // A worker rank leaves the signals (blocked here) to rank 0, which drains and then stops it.
    ThreadPool pool(o.threads);
    run_worker_rank(*job, [&] {
      return runtime::LoadedModel::load(o.model_path, pool, parse_weight_residency(o.weights), job.get(),
                                        o.rope.overrides());
    });
    return;
  }
  if (o.server.served_model_name.empty()) o.server.served_model_name = default_model_name(o.model_path);
  o.server.max_body_bytes = size_t(o.max_body_mib * double(1 << 20));
  if (o.server.num_http_threads == 0) {
    o.server.num_http_threads = int(o.engine.max_running_requests + o.engine.max_waiting_requests + 16);
  }
  o.engine.enable_prefix_cache = !o.no_prefix_cache;

  api::ApiServer server(o.server);
  const int port = server.bind();
  std::thread http([&] { server.listen(); });

  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<runtime::LoadedModel> model;
  std::unique_ptr<engine::Engine> engine;
  try {
    pool = std::make_unique<ThreadPool>(o.threads);
    model = runtime::LoadedModel::load(o.model_path, *pool, parse_weight_residency(o.weights), job.get(),
                                       o.rope.overrides());
    const model::ModelConfig& config = model->config();
    check_ctx_size(config, o.server.context_tokens);
    const kv::KvCacheShape shape = model::kv_cache_shape(config, o.engine.block_size, 0, o.engine.kv_dtype);
    if (o.engine.kv_cache_tokens <= 0 && o.kv_cache_mem_gib > 0) {
      o.engine.kv_cache_tokens = int64_t(o.kv_cache_mem_gib * double(1ull << 30)) / shape.bytes_per_token();
      check(o.engine.kv_cache_tokens >= o.engine.block_size, "--kv-cache-mem-gib {} holds less than one block",
            o.kv_cache_mem_gib);
    }
    if (o.engine.kv_cache_tokens <= 0 && o.server.context_tokens > 0) o.engine.kv_cache_tokens = o.server.context_tokens;
    o.engine.context_tokens = o.server.context_tokens;
    const int64_t pool_tokens = o.engine.kv_cache_tokens > 0 ? o.engine.kv_cache_tokens
                                : o.server.context_tokens > 0 ? o.server.context_tokens
                                                              : config.max_context();
    if (!o.no_prefix_cache) o.engine.kv_tiers = tier_options(o, pool_tokens * shape.bytes_per_token());
    engine = runtime::make_engine(*model, o.engine);
    const int64_t kv_tokens = engine->kv_cache_tokens();
    std::printf("llmesh serve: model %s (%s, %s)\n", o.model_path.c_str(), model->files.format.c_str(),
                config.arch.c_str());
    std::printf("  memory plan: weights %.3f GiB; KV cache %lld tokens = %lld blocks of %lld, %.3f GiB (%s, %lld B/token)\n",
                gib(double(model->files.weights.file_bytes())), (long long)kv_tokens,
                (long long)(kv_tokens / o.engine.block_size), (long long)o.engine.block_size,
                gib(double(kv_tokens) * double(shape.bytes_per_token())),
                std::string(dtype_name(shape.dtype)).c_str(), (long long)shape.bytes_per_token());
    std::printf("  prefix cache %s; weights identity %s, cache namespace %016llx\n",
                o.engine.enable_prefix_cache ? "on" : "off", model->identity.c_str(),
                (unsigned long long)engine->cache_namespace());
    if (o.engine.enable_prefix_cache) print_tiers(engine->stats(), o);
    const int64_t context = engine->context_tokens();
    std::printf("  context %lld tokens; up to %lld running requests, %lld batched tokens per step; %d threads, %s CPU kernels\n",
                (long long)context, (long long)o.engine.max_running_requests,
                (long long)o.engine.max_batched_tokens, pool->num_threads(), kernels::backend_name());
    if (job) {
      std::printf("  %s on %d ranks (KV and weights above are the whole model's; each rank holds its part):\n%s",
                  job->layout().sizes.to_string().c_str(), job->world().size(),
                  job->layout().describe(config).c_str());
      const std::vector<int64_t> weights = dist::rank_weight_bytes(model->files.weights, config, job->layout());
      kv::KvCacheShape pool = shape;
      pool.num_blocks = kv_tokens / o.engine.block_size;
      std::string table;
      for (int r = 0; r < int(weights.size()); ++r) {
        const kv::KvCacheShape mine = dist::rank_kv_shape(pool, job->layout(), r);
        table += fmt::format("{}{:.3f} + {:.3f}", r ? " / " : "", gib(double(weights[size_t(r)])),
                             gib(double(mine.bytes_per_block()) * double(mine.num_blocks)));
      }
      std::printf("    per rank, weights + KV cache: %s GiB (llmesh inspect --plan shows the weights before a launch)\n",
                  table.c_str());
    }
  } catch (const std::exception& e) {
    server.stop();
    http.join();
    throw;
  }
  server.set_ready(model.get(), engine.get(), pool->num_threads());
  std::thread lost_watch;
  if (job) lost_watch = std::thread([&] { end_lost_job(*job, server, *engine); });
  std::printf("llmesh serve: ready at %s://%s:%d (model \"%s\"; %d HTTP workers%s)\n",
              o.server.tls_cert_file.empty() ? "http" : "https", o.server.host.c_str(), port,
              o.server.served_model_name.c_str(), o.server.num_http_threads,
              o.server.api_keys.empty() && o.server.api_key_file.empty() ? "" : ", API keys required");
  std::fflush(stdout);
  // Runs until SIGINT/SIGTERM: then drains (a second signal exits at once, see shutdown_signals.h).
  const int sig = wait_for_shutdown_signal();
  std::printf("llmesh serve: %s: draining (running requests may finish for up to %g s; a second signal exits now)\n",
              sig == SIGINT ? "SIGINT" : "SIGTERM", o.drain_timeout_s);
  std::fflush(stdout);
  server.drain(o.drain_timeout_s);
  http.join();
  flush_kv_tier_writes(*engine);
  if (job) {
    job->stop_watching();
    lost_watch.join();
  }
  std::printf("llmesh serve: stopped\n");
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto options = std::make_shared<ServeOptions>();
  options->server.num_http_threads = 0;  // sized from the engine's limits in run_serve
  CLI::App* cmd = app.add_subcommand("serve", "Serve a model over an OpenAI-compatible HTTP API");
  cmd->add_option("--model,-m", options->model_path, "A .gguf file or a Hugging Face model directory")->required();
  cmd->add_option("--weights", options->weights,
                  "Where weights live: ram (a copy in 2 MiB huge pages: fastest decode), mmap (the file's page cache; "
                  "for models larger than RAM), auto (ram when it fits)")
      ->check(CLI::IsMember({"auto", "ram", "mmap"}))
      ->capture_default_str();
  cmd->add_option("--host", options->server.host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", options->server.port, "Port to listen on (0: any free port)")->capture_default_str();
  cmd->add_option("--served-model-name", options->server.served_model_name,
                  "The model id clients use (default: the file or directory name)");
  cmd->add_option("--ctx-size", options->server.context_tokens,
                  "Context length in tokens (default: the model's, stretched by its RoPE scaling; past it: "
                  "--rope-scaling)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--kv-cache-tokens", options->engine.kv_cache_tokens,
                  "KV cache capacity in tokens (default: the context length)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--kv-cache-mem-gib", options->kv_cache_mem_gib,
                  "KV cache capacity in GiB (instead of --kv-cache-tokens)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-running-requests", options->engine.max_running_requests,
                  "Requests decoded together")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--max-batched-tokens", options->engine.max_batched_tokens,
                  "Token budget per engine step (decodes + prefill chunks)")->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-waiting-requests", options->engine.max_waiting_requests,
                  "Queued requests beyond which new ones get 429")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--block-size", options->engine.block_size, "Tokens per KV block")->capture_default_str()
      ->check(CLI::PositiveNumber);
  add_kv_cache_dtype_option(cmd, &options->engine.kv_dtype);
  add_rope_scaling_options(cmd, &options->rope);
  add_parallel_options(cmd, &options->parallel);
  cmd->add_flag("--no-prefix-cache", options->no_prefix_cache, "Disable automatic prefix caching (and the KV tiers)");
  cmd->add_option("--kv-host-gib", options->kv_host_gib,
                  "Host-RAM tier for KV blocks evicted from the pool, GiB; a later turn loads them back instead of "
                  "recomputing (default: a quarter of the RAM left after weights and pool; 0: off)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--kv-disk-dir", options->kv_disk_dir,
                  "Disk tier for KV blocks, e.g. ~/.cache/llmesh/kv: every cached block is also written here, so "
                  "sessions survive evictions and restarts (default: off)");
  cmd->add_option("--kv-disk-gib", options->kv_disk_gib,
                  "Disk tier budget, GiB; least recently used blocks are deleted beyond it "
                  "(default: half the free space, at most 64)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--api-key", options->server.api_keys,
                  "Require 'Authorization: Bearer KEY' or 'x-api-key: KEY' (all endpoints but /health); repeat for "
                  "several keys");
  cmd->add_option("--api-key-file", options->server.api_key_file,
                  "More keys, one per line: 'KEY' or 'NAME KEY' (NAME appears in the access log; keys never do)");
  cmd->add_option("--tls-cert", options->server.tls_cert_file, "Serve HTTPS with this certificate chain (PEM)");
  cmd->add_option("--tls-key", options->server.tls_key_file, "The private key (PEM) of --tls-cert");
  cmd->add_option("--cors-origin", options->server.cors_origins,
                  "Allow browser requests from this origin, e.g. http://localhost:3000 (repeatable; * for any; "
                  "default: no CORS)");
  cmd->add_option("--access-log", options->server.access_log_path,
                  "Append one JSON line per response: time, remote, method, path, status, bytes, duration_ms, "
                  "request_id, key_id (no prompts)");
  cmd->add_option("--models-dir", options->server.models_dir,
                  "A directory of model files (.gguf, Hugging Face directories) the console lists with their size and "
                  "whether they fit in memory (default: none)");
  cmd->add_option("--console-requests", options->server.console_requests,
                  "Finished requests the console keeps for its Requests view (counts and times, never text)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--threads,-t", options->threads, "Compute threads (default: one per core)");
  cmd->add_option("--http-threads", options->server.num_http_threads,
                  "HTTP workers; each open connection holds one, and beyond them a connection gets 503 at once "
                  "(default: --max-running-requests + --max-waiting-requests + 16, so the engine's 429 comes first)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--request-timeout", options->server.request_read_timeout_s,
                  "Seconds a request's headers and body may take to arrive, however slowly they trickle (else 408)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--max-body-mib", options->max_body_mib, "Largest accepted request body, MiB (larger: 413)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--drain-timeout", options->drain_timeout_s,
                  "On SIGTERM/SIGINT: seconds running requests may take to finish before they are cancelled "
                  "(new ones get 503); a second signal exits at once")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--loop-guard-tokens", options->server.loop_guard_tokens,
                  "End a generation whose last N tokens repeat one span (on for chat/messages/responses, off for "
                  "completions; a request's loop_guard overrides; 0: off by default)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--loop-guard-max-period", options->server.loop_guard_max_period,
                  "Longest repeated span the loop guard looks for, tokens (0: off by default)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->callback([options] { run_serve(*options); });
}

}  // namespace llmesh::app
