// Each subcommand lives in its own cmd_<name>.cpp and adds itself to the CLI
// here. A command's callback throws llmesh::Error for bad input; main() prints
// the message and exits 1.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "core/dtype.h"
#include "core/error.h"
#include "dist/job.h"
#include "kv/kv_pool.h"
#include "model/model_config.h"

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

// --rope-scaling / --rope-scale / --yarn-orig-ctx (run, serve, inspect): stretch a model's RoPE
// past its trained context when the files declare no scaling (or replace theirs).
struct RopeScalingFlags {
  std::string type;  // "": what the files say
  float scale = 0;
  int64_t original_context = 0;  // 0: the model's trained context

  model::ConfigOverrides overrides() const {
    model::ConfigOverrides o;
    if (type.empty()) {
      check(scale == 0 && original_context == 0, "--rope-scale and --yarn-orig-ctx need --rope-scaling");
      return o;
    }
    model::RopeScaling s;
    if (type != "none") {
      check(scale >= 1, "--rope-scaling {} needs --rope-scale F (F >= 1: the context grows F times)", type);
      check(original_context == 0 || type == "yarn", "--yarn-orig-ctx applies to --rope-scaling yarn only");
      s.type = type;
      s.factor = scale;
      s.original_max_position = original_context;
    }
    o.rope_scaling = s;
    return o;
  }
};

inline void add_rope_scaling_options(CLI::App* cmd, RopeScalingFlags* f) {
  const char* group = "Context past the trained length (see docs/engine.md#long-context)";
  cmd->add_option("--rope-scaling", f->type,
                  "RoPE scaling to use instead of the model's: yarn (what Qwen3 and most 2025-26 models document), "
                  "linear, dynamic (NTK-aware), none. Lets --ctx-size go past the trained context")
      ->group(group)->check(CLI::IsMember({"none", "linear", "dynamic", "yarn"}));
  cmd->add_option("--rope-scale", f->scale, "The scaling factor: the context becomes F times the trained one")
      ->group(group)->check(CLI::Range(1.0, 10000.0));
  cmd->add_option("--yarn-orig-ctx", f->original_context,
                  "YaRN: the context the model was pre-trained on (default: the model's context length)")
      ->group(group)->check(CLI::PositiveNumber);
}

// --ctx-size past what the model reaches: an error that says how to reach further.
inline void check_ctx_size(const model::ModelConfig& c, int64_t ctx_size) {
  const int64_t max = c.max_context();
  if (ctx_size <= max) return;
  const model::RopeScaling& s = c.rope_scaling;
  if (!s.enabled()) {
    const int64_t factor = (ctx_size + c.max_position - 1) / c.max_position;
    fail("--ctx-size {} is more than the model's context of {} tokens, and the model declares no RoPE scaling; "
         "to stretch it (at some cost in quality), add --rope-scaling yarn --rope-scale {}",
         ctx_size, max, factor);
  }
  fail("--ctx-size {} is more than the {} tokens that the model's RoPE scaling ({}, factor {}) reaches; raise "
       "--rope-scale to go further",
       ctx_size, max, s.type, s.factor);
}

// --tp / --pp / --ep and the explicit splits (run, serve and inspect --plan), in their own help group.
inline const char* add_layout_options(CLI::App* cmd, dist::ParallelOptions* o) {
  const char* group = "Several ranks (start with: mpirun -np N llmesh ...; see docs/parallel.md)";
  cmd->add_option("--tp", o->sizes.tp, "Tensor parallel: attention heads and FFN columns split over N ranks per stage")
      ->group(group)->check(CLI::Range(1, 4096));
  cmd->add_option("--pp", o->sizes.pp, "Pipeline parallel: the layers split into N stages of consecutive layers")
      ->group(group)->check(CLI::Range(1, 4096));
  cmd->add_option("--ep", o->sizes.ep, "Expert parallel: a MoE model's routed experts split over N ranks per stage")
      ->group(group)->check(CLI::Range(1, 4096));
  cmd->add_option("--layer-split", o->layer_split,
                  "Layers per pipeline stage, like 10,9,9 (default: in proportion to each stage's memory)")
      ->group(group);
  cmd->add_option("--expert-split", o->expert_split,
                  "Experts per expert-parallel rank, like 108,92,92,92 (default: in proportion to memory)")
      ->group(group);
  return group;
}

// The layout flags and what a rank of a running job needs (run and serve).
inline void add_parallel_options(CLI::App* cmd, dist::ParallelOptions* o) {
  const char* group = add_layout_options(cmd, o);
  cmd->add_option("--rank-memory-gib", o->rank_memory_gib,
                  "Usable memory this rank reports for placement (default: the machine's available RAM)")
      ->group(group);
  cmd->add_option("--rank-timeout", o->rank_timeout_s,
                  "Seconds rank 0 waits for another rank inside a step before it declares the job lost: requests "
                  "fail, /health says 503 and the job exits non-zero (raise it for very long prefill chunks)")
      ->group(group)->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--comm", o->comm,
                  "The ranks' communication library: mpi (CPU ranks; shared memory, TCP or RDMA), nccl (GPU ranks; "
                  "needs a build with CUDA and NCCL)")
      ->group(group)->capture_default_str()->check(CLI::IsMember({"mpi", "nccl"}));
}

// A worker rank's whole command (ranks > 0 of a job): load its shard with `load`
// (returns a runtime::LoadedModel), then follow rank 0 until it stops the job.
// An error here ends every rank: rank 0 would wait for this one forever.
template <typename Load>
void run_worker_rank(dist::Job& job, Load load) {
  try {
    auto model = load();
    job.run_worker(*model->model);
  } catch (const std::exception& e) {
    job.fail(e.what());
  }
}

void add_run_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_sim_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_route_command(CLI::App& app);
void add_supervise_command(CLI::App& app);

}  // namespace llmesh::app
