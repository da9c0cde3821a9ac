// `llmesh inspect`: what a model file is and what it will cost to serve.
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/llmesh/commands.h"
#include "kernels/ops.h"
#include "kv/kv_pool.h"
#include "runtime/model_file_set.h"
#include "runtime/model_summary.h"

namespace llmesh::app {

namespace {

struct InspectOptions {
  std::string model_path;
  bool json = false;
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

void inspect(const InspectOptions& o) {
  const runtime::ModelFileSet opened = runtime::ModelFileSet::open(o.model_path);
  const model::ModelFiles& files = opened.files;
  const model::ModelConfig& c = files.config;
  const runtime::ModelSummary summary = runtime::summarize(files);
  const int64_t total_params = summary.num_parameters, active_params = summary.num_active_parameters;
  const int64_t weight_bytes = summary.weight_bytes;
  const kv::KvCacheShape kv{c.num_layers, c.num_kv_heads, c.head_dim, 16, 0};  // the default --kv-cache-dtype
  nlohmann::json kv_by_dtype = nlohmann::json::object();
  std::string kv_others;  // "f32 112 KiB, ..." for the text report
  for (DType d : {DType::F32, DType::F16, DType::BF16, DType::Q8_0}) {
    if (c.head_dim % dtype_block_size(d) != 0) continue;
    const kv::KvCacheShape shape{c.num_layers, c.num_kv_heads, c.head_dim, 16, 0, d};
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
      {"context_length", c.max_position},
      {"kv_cache_dtype", dtype_name(kv.dtype)},
      {"kv_bytes_per_token", kv.bytes_per_token()},
      {"kv_bytes_per_token_by_dtype", kv_by_dtype},
      {"rope_theta", c.rope_theta},
      {"rope_scaling", c.rope_scaling.type},
      {"tie_word_embeddings", c.tie_word_embeddings},
      {"has_chat_template", !opened.tokenizer.chat_template.empty()},
      {"cpu_kernels", kernels::backend_name()},
  };
  if (c.is_moe()) {
    out["num_experts"] = c.num_experts;
    out["num_experts_per_token"] = c.num_experts_per_token;
    out["moe_intermediate_size"] = c.moe_intermediate_size;
  }
  if (o.json) {
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  fmt::print("model         {} ({}, {})\n", files.name, files.format, files.path);
  fmt::print("architecture  {}{}\n", c.arch,
             c.is_moe() ? fmt::format(" — {} experts, {} active per token", c.num_experts, c.num_experts_per_token) : "");
  fmt::print("parameters    {} total, {} active per token\n", human_count(double(total_params)),
             human_count(double(active_params)));
  fmt::print("weights       {}\n", human_bytes(double(weight_bytes)));
  for (const auto& [name, share] : summary.by_dtype)
    fmt::print("  {:<6} {:>5} tensors  {}\n", name, share.num_tensors, human_bytes(double(share.num_bytes)));
  fmt::print("shape         hidden {}, {} layers, {} heads ({} KV heads) x {}, FFN {}, vocab {}\n", c.hidden_size,
             c.num_layers, c.num_heads, c.num_kv_heads, c.head_dim, c.is_moe() ? c.moe_intermediate_size : c.intermediate_size,
             c.vocab_size);
  fmt::print("context       {} tokens (RoPE theta {}{})\n", c.max_position, c.rope_theta,
             c.rope_scaling.type.empty() ? "" : ", " + c.rope_scaling.type + " scaling");
  fmt::print("KV cache      {} per token ({}{}), {} at full context\n", human_bytes(double(kv.bytes_per_token())),
             dtype_name(kv.dtype), kv_others, human_bytes(double(kv.bytes_per_token()) * double(c.max_position)));
  fmt::print("chat template {}\n", opened.tokenizer.chat_template.empty() ? "none" : "yes");
  fmt::print("CPU kernels   {}{}\n", kernels::backend_name(),
             std::string_view(kernels::backend_name()) == "ref"
                 ? " (the scalar reference: no AVX2 on this CPU, or LLMESH_KERNELS=ref)"
                 : "");
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto o = std::make_shared<InspectOptions>();
  CLI::App* cmd = app.add_subcommand("inspect", "Show a model's architecture, parameters, dtypes and memory needs.");
  cmd->add_option("-m,--model", o->model_path, "GGUF file or Hugging Face model directory")->required();
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->callback([o] { inspect(*o); });
}

}  // namespace llmesh::app
