#include "supervise/supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include "core/error.h"
#include "core/log.h"
#include "route/health_checker.h"
#include "route/upstream_spec.h"

namespace llmesh::supervise {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string describe_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return fmt::format("ended with wait status {}", status);
}

// The status the supervisor itself exits with for a child's wait status.
int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// Starts the command in its own process group (so a hung job's every process
// can be signalled at once), with the signal mask the supervisor started with.
// An exec failure (no such program) is an Error here, not a restart loop.
pid_t spawn(const std::vector<std::string>& command, const sigset_t& child_mask) {
  int report[2];
  check(pipe2(report, O_CLOEXEC) == 0, "pipe: {}", std::strerror(errno));
  const pid_t pid = fork();
  check(pid >= 0, "fork: {}", std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    sigprocmask(SIG_SETMASK, &child_mask, nullptr);
    std::vector<char*> argv;
    for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    const int err = errno;
    (void)!write(report[1], &err, sizeof err);
    _exit(127);
  }
  close(report[1]);
  int err = 0;
  const ssize_t n = read(report[0], &err, sizeof err);  // 0 bytes: exec succeeded (the pipe closed)
  close(report[0]);
  if (n == ssize_t(sizeof err)) {
    waitpid(pid, nullptr, 0);
    fail("cannot run '{}': {}", command[0], std::strerror(err));
  }
  return pid;
}

// Waits up to `seconds` for the child; its wait status, or nothing.
std::optional<int> reap(pid_t pid, double seconds) {
  const Clock::time_point start = Clock::now();
  while (true) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    if (since(start) >= seconds) return std::nullopt;
    usleep(50 * 1000);
  }
}

// Ends the child's whole process group: SIGTERM, then SIGKILL after the grace.
int stop_group(pid_t pid, double grace_s) {
  kill(-pid, SIGTERM);
  if (std::optional<int> status = reap(pid, grace_s)) return *status;
  log_warn("supervise: pid {} did not stop within {:g} s of SIGTERM; sending SIGKILL", pid, grace_s);
  kill(-pid, SIGKILL);
  return reap(pid, 1e9).value_or(0);
}

// Takes a pending SIGINT / SIGTERM within `seconds`; 0 when none came.
int take_signal(const sigset_t& set, double seconds) {
  const timespec wait{time_t(seconds), long((seconds - double(time_t(seconds))) * 1e9)};
  const int sig = sigtimedwait(&set, nullptr, &wait);
  return sig > 0 ? sig : 0;
}

// How one run of the child ended.
struct Ending {
  int status = 0;            // its wait status
  std::string unhealthy;     // why the supervisor ended it ("" : it ended by itself)
  int stop_signal = 0;       // the signal the operator sent, if that is why
};

class Watch {
 public:
  Watch(const SupervisorOptions& o, const sigset_t& signals) : o_(o), signals_(signals) {
    if (!o.health_url.empty()) spec_ = route::parse_upstream_flag(o.health_url);
  }

  Ending run(pid_t pid) {
    const Clock::time_point started = Clock::now();
    bool healthy_once = false;
    int failures = 0;
    Clock::time_point next_probe = started + std::chrono::seconds(1);
    while (true) {
      if (std::optional<int> status = reap(pid, 0)) return {*status, "", 0};
      if (const int sig = take_signal(signals_, 0.2)) return forward(pid, sig);
      if (!spec_ || Clock::now() < next_probe) continue;
      const std::string problem = route::check_upstream_health(*spec_, int64_t(o_.health_timeout_s * 1000));
      if (problem.empty()) {
        if (!healthy_once) log_info("supervise: pid {} is healthy after {:.1f} s", pid, since(started));
        healthy_once = true;
        failures = 0;
      } else if (healthy_once && ++failures >= o_.health_failures) {
        return end(pid, fmt::format("{} health probes in a row failed (last: {})", failures, problem));
      } else if (!healthy_once && since(started) > o_.startup_timeout_s) {
        return end(pid, fmt::format("not healthy {:g} s after start (--startup-timeout; last: {})",
                                    o_.startup_timeout_s, problem));
      }
      next_probe = Clock::now() + std::chrono::milliseconds(healthy_once ? int64_t(o_.health_interval_s * 1000) : 1000);
    }
  }

 private:
  Ending end(pid_t pid, std::string why) {
    log_warn("supervise: pid {}: {}; stopping it", pid, why);
    return {stop_group(pid, o_.stop_grace_s), std::move(why), 0};
  }

  // The operator's signal goes to the child (a server drains, mpirun passes it
  // on to its ranks); a second one ends the child's whole group at once.
  Ending forward(pid_t pid, int sig) {
    log_info("supervise: {}: passing it to pid {} (a second signal kills it); not restarting", strsignal(sig), pid);
    kill(pid, sig);
    while (true) {
      if (std::optional<int> status = reap(pid, 0)) return {*status, "", sig};
      if (take_signal(signals_, 0.2)) return {stop_group(pid, 0), "", sig};
    }
  }

  const SupervisorOptions& o_;
  const sigset_t& signals_;
  std::optional<route::UpstreamSpec> spec_;
};

}  // namespace

double restart_delay_s(int restart) { return std::min(30.0, double(1 << std::clamp(restart - 1, 0, 5))); }

int supervise(const SupervisorOptions& o) {
  check(!o.command.empty(), "supervise: no command (write it after --, e.g. llmesh supervise -- llmesh serve ...)");
  sigset_t signals, original;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigprocmask(SIG_BLOCK, &signals, &original);
  Watch watch(o, signals);
  std::string command_line;
  for (const std::string& a : o.command) command_line += (command_line.empty() ? "" : " ") + a;
  int quick_failures = 0;
  for (int run = 1;; ++run) {
    const Clock::time_point started = Clock::now();
    const pid_t pid = spawn(o.command, original);
    log_info("supervise: run {}: started pid {}: {}", run, pid, command_line);
    const Ending e = watch.run(pid);
    const double uptime = since(started);
    log_info("supervise: pid {} {} after {:.1f} s", pid, describe_status(e.status), uptime);
    if (e.stop_signal) return exit_code(e.status);
    if (e.unhealthy.empty() && WIFEXITED(e.status) && WEXITSTATUS(e.status) == 0) {
      log_info("supervise: a clean exit; not restarting");
      return 0;
    }
    quick_failures = uptime >= o.stable_after_s ? 1 : quick_failures + 1;
    if (o.max_restarts > 0 && quick_failures > o.max_restarts) {
      log_error("supervise: {} failures in a row, each within {:g} s of its start; giving up (--max-restarts)",
                quick_failures, o.stable_after_s);
      return e.unhealthy.empty() ? std::max(1, exit_code(e.status)) : 1;
    }
    const double delay = restart_delay_s(quick_failures);
    log_info("supervise: restarting in {:g} s", delay);
    if (const int sig = take_signal(signals, delay)) {
      log_info("supervise: {} while waiting to restart; stopping", strsignal(sig));
      return 0;
    }
  }
}

}  // namespace llmesh::supervise
