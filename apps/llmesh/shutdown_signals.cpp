#include "apps/llmesh/shutdown_signals.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

namespace llmesh::app {

namespace {

std::mutex g_mutex;
std::condition_variable g_signalled;
int g_first_signal = 0;  // 0 until a signal arrives

sigset_t shutdown_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

void watch_signals() {
  const sigset_t set = shutdown_set();
  int sig = 0;
  sigwait(&set, &sig);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_first_signal = sig;
  }
  g_signalled.notify_all();
  sigwait(&set, &sig);
  // The operator insists: no drain, no destructors.
  const char message[] = "llmesh serve: second signal: exiting now\n";
  (void)!write(STDERR_FILENO, message, sizeof(message) - 1);
  _exit(128 + sig);
}

}  // namespace

void install_shutdown_signals() {
  const sigset_t set = shutdown_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread(watch_signals).detach();
}

int wait_for_shutdown_signal() {
  std::unique_lock<std::mutex> lock(g_mutex);
  g_signalled.wait(lock, [] { return g_first_signal != 0; });
  return g_first_signal;
}

}  // namespace llmesh::app
