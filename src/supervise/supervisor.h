// Keeps a server running: starts a command, and when it exits with an error,
// dies of a signal, or (with a health URL) stops answering /health, starts it
// again after a backoff, saying why each time. A clean exit (status 0: the
// server was stopped on purpose) ends supervision. SIGINT / SIGTERM go to the
// child, and the supervisor exits with the child's status, without a restart.
//
//   llmesh supervise --health-url http://127.0.0.1:8080 --
//       mpirun -np 4 llmesh serve --model M --tp 2 --pp 2 --kv-disk-dir ~/.cache/llmesh/kv
//   (one command line)
//
// With the disk KV tier the restarted server reads back its sessions, so a
// crash costs the restart, not every agent's cold prefill.
#pragma once

#include <string>
#include <vector>

namespace llmesh::supervise {

struct SupervisorOptions {
  std::vector<std::string> command;  // argv of the child; [0] is looked up on PATH
  std::string health_url;            // "" : watch the process only
  double health_interval_s = 5;      // between probes once the server has been healthy
  int health_failures = 3;           // consecutive failed probes that mean "hung"
  double health_timeout_s = 5;       // one probe's limit
  double startup_timeout_s = 1800;   // until the first healthy probe (loading a big model is slow)
  int max_restarts = 10;             // quick failures in a row before giving up (0: never give up)
  double stable_after_s = 60;        // uptime after which the backoff and that count start over
  double stop_grace_s = 30;          // SIGTERM, then SIGKILL after this long
};

// The wait before restart number `restart` (1-based) of a run of quick
// failures: 1, 2, 4, 8, 16, then 30 s.
double restart_delay_s(int restart);

// Supervises until a clean exit, a signal, or too many quick failures;
// returns the exit status for the supervisor itself.
int supervise(const SupervisorOptions& options);

}  // namespace llmesh::supervise
