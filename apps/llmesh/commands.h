// Each subcommand lives in its own cmd_<name>.cpp and adds itself to the CLI
// here. A command's callback throws llmesh::Error for bad input; main() prints
// the message and exits 1.
#pragma once

#include <CLI/CLI.hpp>

namespace llmesh::app {

void add_run_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_sim_command(CLI::App& app);
void add_bench_command(CLI::App& app);

}  // namespace llmesh::app
