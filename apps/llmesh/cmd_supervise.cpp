// `llmesh supervise [options] -- COMMAND...`: keeps a server or a multi-rank
// job running (src/supervise/supervisor.h).
#include <cstdlib>
#include <memory>

#include "apps/llmesh/commands.h"
#include "supervise/supervisor.h"

namespace llmesh::app {

void add_supervise_command(CLI::App& app) {
  auto o = std::make_shared<supervise::SupervisorOptions>();
  CLI::App* cmd = app.add_subcommand(
      "supervise",
      "Run a server and restart it with backoff when it crashes, a rank dies or /health stops answering");
  cmd->footer(
      "Example (one machine, 4 ranks; the disk KV tier keeps the sessions across restarts):\n"
      "  llmesh supervise --health-url http://127.0.0.1:8080 -- \\\n"
      "      mpirun -np 4 llmesh serve --model M --tp 2 --pp 2 --kv-disk-dir ~/.cache/llmesh/kv\n"
      "A clean exit (status 0) ends supervision; SIGINT/SIGTERM are passed to the command, which drains.\n"
      "Restarts wait 1, 2, 4, 8, 16, then 30 s; the count starts over after --stable-after s of uptime.");
  cmd->add_option("command", o->command, "The command to run, after --")->required()->expected(1, -1);
  cmd->add_option("--health-url", o->health_url,
                  "Also probe GET URL/health, e.g. http://127.0.0.1:8080: a server that stops answering (or answers "
                  "503 after a lost rank) is stopped and restarted (default: watch the process only)");
  cmd->add_option("--health-interval", o->health_interval_s, "Seconds between probes once it has been healthy")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--health-failures", o->health_failures, "Failed probes in a row that mean it is hung")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--health-timeout", o->health_timeout_s, "Seconds one probe may take")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--startup-timeout", o->startup_timeout_s,
                  "Seconds a (re)start may take to become healthy (loading a large model is slow)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--max-restarts", o->max_restarts,
                  "Quick failures in a row before giving up (0: never give up)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--stable-after", o->stable_after_s,
                  "Seconds of uptime after which a failure counts as the first again")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--stop-grace", o->stop_grace_s, "Seconds between SIGTERM and SIGKILL when it must be stopped")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->callback([o] { std::exit(supervise::supervise(*o)); });
}

}  // namespace llmesh::app
