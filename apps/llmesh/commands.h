// Each subcommand lives in its own cmd_<name>.cpp and adds itself to the CLI
// here. A command's callback throws llmesh::Error for bad input; main() prints
// the message and exits 1.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "core/dtype.h"
#include "kv/kv_pool.h"

namespace llmesh::app {

// --kv-cache-dtype (run and serve): the element type of the cached K/V.
inline void add_kv_cache_dtype_option(CLI::App* cmd, DType* dtype) {
  cmd->add_option_function<std::string>(
         "--kv-cache-dtype", [dtype](const std::string& name) { parse_dtype(name, dtype); },
         "Element type of the KV cache: f16 halves f32's memory at ~5e-4 relative error per value, bf16 "
         "the same memory at 4e-3, q8_0 about a quarter of f32 (head_dim a multiple of 32)")
      ->check(CLI::IsMember({"f32", "f16", "bf16", "q8_0"}))
      ->default_str(std::string(dtype_name(kv::kDefaultKvDtype)));
}

void add_run_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_sim_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_route_command(CLI::App& app);

}  // namespace llmesh::app
