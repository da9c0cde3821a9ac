// `llmesh inspect`: what a model file is and what it will cost to serve.
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/llmesh/commands.h"
#include "core/error.h"
#include "dist/parallel_plan.h"
#include "kernels/ops.h"
#include "kv/kv_pool.h"
#include "model/model.h"
#include "model/blocks/rope.h"
#include "runtime/model_file_set.h"
#include "runtime/model_summary.h"

namespace llmesh::app {

namespace {

struct InspectOptions {
  std::string model_path;
  bool json = false;
  bool plan = false;
  dist::ParallelOptions parallel;
  std::string rank_memory_gib;  // "96,84,84,84"
  RopeScalingFlags rope;
};

// The links a cluster is built from, for the per-token estimate: usable
// bandwidth and per-message latency (typical published figures, not measured here).
struct Link {
  const char* name;
  double bytes_per_s, latency_s;
};
constexpr Link kLinks[] = {
    {"10 GbE (TCP)", 1.1e9, 30e-6},       {"25 GbE (RDMA)", 2.9e9, 3e-6},
    {"Thunderbolt 5 (TCP)", 5e9, 20e-6}, {"PCIe 4 x16 (GPU peer)", 25e9, 5e-6},
    {"NVLink 4 (H100)", 400e9, 3e-6},
};

std::string human_bytes(double b) {
  if (b >= (1ull << 30)) return fmt::format("{:.2f} GiB", b / double(1ull << 30));
  if (b >= (1ull << 20)) return fmt::format("{:.1f} MiB", b / double(1ull << 20));
  return fmt::format("{:.1f} KiB", b / 1024.0);
}

std::string human_count(double n) {
  if (n >= 1e9) return fmt::format("{:.2f}B", n / 1e9);
  if (n >= 1e6) return fmt::format("{:.1f}M", n / 1e6);
  return fmt::format("{:.1f}K", n / 1e3);
}

std::vector<double> rank_memory(const InspectOptions& o, int world) {
  if (o.rank_memory_gib.empty()) return std::vector<double>(size_t(world), 1.0);  // equal ranks
  std::vector<double> out = dist::parse_rank_memory_gib(o.rank_memory_gib, "--rank-memory-gib");
  check(int(out.size()) == world, "--rank-memory-gib names {} ranks; the layout has {}", out.size(), world);
  for (double& gib : out) gib *= double(1ull << 30);
  return out;
}

// --plan: the layout, each rank's weights, and the bytes and link time per token.
void print_plan(const InspectOptions& o, const model::ModelFiles& files, nlohmann::json& out) {
  const model::ModelConfig& c = files.config;
  const dist::ParallelSizes& sizes = o.parallel.sizes;
  const std::vector<double> memory = rank_memory(o, sizes.world());
  const dist::ParallelLayout layout =
      dist::plan_layout(c, sizes, dist::parse_split(o.parallel.layer_split, "--layer-split"),
                        dist::parse_split(o.parallel.expert_split, "--expert-split"), memory,
                        dist::placement_costs(files.weights, c));
  const std::vector<int64_t> weights = dist::rank_weight_bytes(files.weights, c, layout);
  const dist::CommPlan comm = dist::plan_comm(c, layout);
  nlohmann::json ranks = nlohmann::json::array(), links = nlohmann::json::array();
  for (int r = 0; r < sizes.world(); ++r) {
    nlohmann::json rank = {{"rank", r}, {"weight_bytes", weights[size_t(r)]}};
    if (!o.rank_memory_gib.empty()) rank["memory_bytes"] = memory[size_t(r)];
    ranks.push_back(rank);
  }
  for (const Link& l : kLinks)
    links.push_back({{"link", l.name}, {"decode_comm_seconds_per_token", comm.decode_seconds(l.bytes_per_s, l.latency_s)}});
  out["plan"] = {{"layout", sizes.to_string()},
                 {"ranks", ranks},
                 {"stage_layers", layout.stage_layers},
                 {"lane_experts", layout.lane_experts},
                 {"all_reduces_per_step_rank0", comm.reductions_per_stage},
                 {"all_reduces_per_step", comm.reductions_in_model},
                 {"all_reduce_bytes_per_token", comm.reduce_bytes},
                 {"handoff_bytes_per_token", comm.handoff_bytes},
                 {"stage_boundaries", comm.num_boundaries},
                 {"logits_bytes_per_sampled_token", comm.logits_bytes},
                 {"rank0_sent_bytes_per_token", comm.rank0_sent_per_token()},
                 {"links", links}};
  if (o.json) return;
  fmt::print("\nplan          {} on {} ranks\n{}", sizes.to_string(), sizes.world(), layout.describe(c));
  for (int r = 0; r < sizes.world(); ++r) {
    fmt::print("  rank {}: weights {}", r, human_bytes(double(weights[size_t(r)])));
    if (!o.rank_memory_gib.empty()) {
      const double left = memory[size_t(r)] - double(weights[size_t(r)]);
      fmt::print(" of {}: {}", human_bytes(memory[size_t(r)]),
                 left > 0 ? human_bytes(left) + " left for the KV cache" : "DOES NOT FIT");
    }
    fmt::print("\n");
  }
  fmt::print("per token     ");
  if (comm.reductions_per_stage > 0)
    fmt::print("{} all-reduces of {} over {} ranks ({} on rank 0's stage: {}); ", comm.reductions_in_model,
               human_bytes(double(c.hidden_size) * 4), comm.width, comm.reductions_per_stage,
               human_bytes(double(comm.reduce_bytes)));
  if (comm.num_boundaries > 0)
    fmt::print("{} per stage boundary x {}; ", human_bytes(double(comm.handoff_bytes)), comm.num_boundaries);
  if (comm.logits_bytes > 0) fmt::print("{} of logits per sampled token to rank 0", human_bytes(double(comm.logits_bytes)));
  if (comm.reductions_per_stage == 0 && comm.num_boundaries == 0) fmt::print("nothing (one rank)");
  fmt::print("\ndecode comm   per token and sequence (latency + bytes / bandwidth; typical link figures):\n");
  for (const Link& l : kLinks)
    fmt::print("  {:<24} {:>8.3f} ms  ({:g} GB/s, {:g} us)\n", l.name, 1e3 * comm.decode_seconds(l.bytes_per_s, l.latency_s),
               l.bytes_per_s / 1e9, l.latency_s * 1e6);
}

// null without scaling; else its type and the parameters that type reads.
nlohmann::json rope_scaling_json(const model::ModelConfig& c) {
  const model::RopeScaling& s = c.rope_scaling;
  if (!s.enabled()) return nullptr;
  nlohmann::json j = {{"type", s.type}, {"factor", s.factor}, {"original_context_length", s.original_max_position}};
  if (s.type == "yarn") {
    j["beta_fast"] = s.beta_fast;
    j["beta_slow"] = s.beta_slow;
    j["attention_factor"] = model::rope_attention_factor(c);
  }
  return j;
}

void inspect(const InspectOptions& o) {
  const runtime::ModelFileSet opened = runtime::ModelFileSet::open(o.model_path, o.rope.overrides());
  const model::ModelFiles& files = opened.files;
  const model::ModelConfig& c = files.config;
  const runtime::ModelSummary summary = runtime::summarize(files);
  const int64_t total_params = summary.num_parameters, active_params = summary.num_active_parameters;
  const int64_t weight_bytes = summary.weight_bytes;
  const kv::KvCacheShape kv = model::kv_cache_shape(c, 16, 0, kv::kDefaultKvDtype);  // the default --kv-cache-dtype
  nlohmann::json kv_by_dtype = nlohmann::json::object();
  std::string kv_others;  // "f32 112 KiB, ..." for the text report
  for (DType d : {DType::F32, DType::F16, DType::BF16, DType::Q8_0}) {
    if (kv.head_dim % dtype_block_size(d) != 0 || kv.value_dim() % dtype_block_size(d) != 0) continue;
    const kv::KvCacheShape shape = model::kv_cache_shape(c, 16, 0, d);
    kv_by_dtype[std::string(dtype_name(d))] = shape.bytes_per_token();
    if (d != kv.dtype) kv_others += fmt::format(", {} {}", dtype_name(d), human_bytes(double(shape.bytes_per_token())));
  }

  nlohmann::json dtypes = nlohmann::json::object();
  for (const auto& [name, share] : summary.by_dtype)
    dtypes[name] = {{"tensors", share.num_tensors}, {"bytes", share.num_bytes}};
  nlohmann::json out = {
      {"path", files.path},
      {"format", files.format},
      {"name", files.name},
      {"architecture", c.arch},
      {"parameters", total_params},
      {"active_parameters", active_params},
      {"weight_bytes", weight_bytes},
      {"quantization", summary.quantization},
      {"tensor_dtypes", dtypes},
      {"vocab_size", c.vocab_size},
      {"hidden_size", c.hidden_size},
      {"num_layers", c.num_layers},
      {"num_heads", c.num_heads},
      {"num_kv_heads", c.num_kv_heads},
      {"head_dim", c.head_dim},
      {"intermediate_size", c.intermediate_size},
      {"context_length", c.max_context()},
      {"trained_context_length", c.max_position},
      {"kv_cache_dtype", dtype_name(kv.dtype)},
      {"kv_bytes_per_token", kv.bytes_per_token()},
      {"kv_bytes_per_token_by_dtype", kv_by_dtype},
      {"rope_theta", c.rope_theta},
      {"rope_scaling", rope_scaling_json(c)},
      {"tie_word_embeddings", c.tie_word_embeddings},
      {"has_chat_template", !opened.tokenizer.chat_template.empty()},
      {"cpu_kernels", kernels::backend_name()},
  };
  if (c.is_moe()) {
    out["num_experts"] = c.num_experts;
    out["num_experts_per_token"] = c.num_experts_per_token;
    out["moe_intermediate_size"] = c.moe_intermediate_size;
    out["router"] = c.router_gating == model::RouterGating::Sigmoid ? "sigmoid" : "softmax";
    out["num_shared_experts"] = c.num_shared_experts;
    out["leading_dense_layers"] = c.first_dense_layers;
    out["expert_groups"] = c.expert_groups;
    out["expert_groups_used"] = c.expert_groups_used;
    out["routed_scaling"] = c.routed_scaling;
    if (c.swiglu_limit > 0) out["swiglu_limit"] = c.swiglu_limit;
  }
  if (c.attention_sinks) out["attention_sinks"] = true;
  if (c.rope_dim() != c.head_dim) out["rotary_dim"] = c.rope_dim();
  int64_t num_window_layers = 0;
  for (int64_t layer = 0; layer < c.num_layers; ++layer) num_window_layers += c.layer_window(layer) > 0;
  if (num_window_layers > 0) {
    out["sliding_window"] = c.sliding_window;
    out["sliding_window_layers"] = num_window_layers;
  }
  if (c.is_mla()) {
    out["attention"] = "mla";
    out["q_lora_rank"] = c.q_lora_rank;
    out["kv_lora_rank"] = c.kv_lora_rank;
    out["qk_nope_head_dim"] = c.qk_nope_dim;
    out["v_head_dim"] = c.v_head_dim;
    out["kv_cache_row"] = c.kv_row_dim();
  }
  if (o.plan && o.json) print_plan(o, files, out);
  if (o.json) {
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  fmt::print("model         {} ({}, {})\n", files.name, files.format, files.path);
  fmt::print("architecture  {}{}\n", c.arch,
             c.is_moe() ? fmt::format(" — {} experts, {} active per token{}{}", c.num_experts, c.num_experts_per_token,
                                      c.num_shared_experts > 0 ? fmt::format(" + {} shared", c.num_shared_experts) : "",
                                      c.first_dense_layers > 0
                                          ? fmt::format(", first {} layer(s) dense", c.first_dense_layers)
                                          : "")
                        : "");
  fmt::print("parameters    {} total, {} active per token\n", human_count(double(total_params)),
             human_count(double(active_params)));
  fmt::print("weights       {}\n", human_bytes(double(weight_bytes)));
  for (const auto& [name, share] : summary.by_dtype)
    fmt::print("  {:<6} {:>5} tensors  {}\n", name, share.num_tensors, human_bytes(double(share.num_bytes)));
  if (c.is_mla()) {
    fmt::print("shape         hidden {}, {} layers, {} heads x {} (q/k) / {} (v), FFN {}, vocab {}\n", c.hidden_size,
               c.num_layers, c.num_heads, c.head_dim, c.v_head_dim,
               c.is_moe() ? c.moe_intermediate_size : c.intermediate_size, c.vocab_size);
    fmt::print("attention     multi-head latent: {}latent {} + rotary key {} cached per token (not {} K/V values)\n",
               c.q_lora_rank > 0 ? fmt::format("queries through rank {}, ", c.q_lora_rank) : "", c.kv_lora_rank,
               c.rope_dim(), c.num_heads * (c.head_dim + c.v_head_dim));
  } else {
    fmt::print("shape         hidden {}, {} layers, {} heads ({} KV heads) x {}, FFN {}, vocab {}\n", c.hidden_size,
               c.num_layers, c.num_heads, c.num_kv_heads, c.head_dim,
               c.is_moe() ? c.moe_intermediate_size : c.intermediate_size, c.vocab_size);
  }
  const model::RopeScaling& rs = c.rope_scaling;
  fmt::print("context       {} tokens (RoPE theta {}{}{})\n", c.max_context(), c.rope_theta,
             !rs.enabled() ? ""
             : c.max_context() == c.max_position
                 ? fmt::format(", {} scaling", rs.type)
                 : fmt::format(", {} scaling x{} over a {}-token original context", rs.type, rs.factor,
                               rs.type == "yarn" ? rs.original_max_position : c.max_position),
             c.rope_dim() != c.head_dim ? fmt::format(", on {} of {} head dims", c.rope_dim(), c.head_dim) : "");
  if (num_window_layers > 0)
    fmt::print("attention     sliding window of {} tokens on {} of {} layers\n", c.sliding_window, num_window_layers,
               c.num_layers);
  if (c.attention_sinks) fmt::print("attention     a learned sink logit per head\n");
  if (c.swiglu_limit > 0) fmt::print("experts       clamped SwiGLU (limit {})\n", c.swiglu_limit);
  fmt::print("KV cache      {} per token ({}{}), {} at full context\n", human_bytes(double(kv.bytes_per_token())),
             dtype_name(kv.dtype), kv_others, human_bytes(double(kv.bytes_per_token()) * double(c.max_context())));
  fmt::print("chat template {}\n", opened.tokenizer.chat_template.empty() ? "none" : "yes");
  fmt::print("CPU kernels   {}{}\n", kernels::backend_name(),
             std::string_view(kernels::backend_name()) == "ref"
                 ? " (the scalar reference: no AVX2 on this CPU, or LLMESH_KERNELS=ref)"
                 : "");
  if (o.plan) print_plan(o, files, out);
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto o = std::make_shared<InspectOptions>();
  CLI::App* cmd = app.add_subcommand("inspect", "Show a model's architecture, parameters, dtypes and memory needs.");
  cmd->add_option("-m,--model", o->model_path, "GGUF file or Hugging Face model directory")->required();
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->add_flag("--plan", o->plan,
                "Also show a multi-rank layout (--tp/--pp/--ep, splits): each rank's layers, experts and weights, "
                "and the bytes and link time per token; reads no weights");
  add_layout_options(cmd, &o->parallel);
  add_rope_scaling_options(cmd, &o->rope);
  cmd->add_option("--rank-memory-gib", o->rank_memory_gib,
                  "With --plan: each rank's usable memory, like 96,84,84,84 (placement follows it; default: equal)")
      ->group("Several ranks (start with: mpirun -np N llmesh ...; see docs/parallel.md)");
  cmd->callback([o] { inspect(*o); });
}

}  // namespace llmesh::app
