// SIGINT and SIGTERM for `llmesh serve`: the first asks for a graceful
// shutdown (drain, then exit 0), a second exits at once (status 128 + signal).
//
// Signals are blocked in every thread and taken by one watcher thread with
// sigwait, so no work happens in a signal handler. Call
// install_shutdown_signals() before starting any other thread: threads
// inherit the blocked mask from the one that creates them.
#pragma once

namespace llmesh::app {

void install_shutdown_signals();

// Blocks until the first SIGINT/SIGTERM; returns its number.
int wait_for_shutdown_signal();

}  // namespace llmesh::app
