#include "dist/parallel_plan.h"

#include <algorithm>
#include <charconv>
#include <string_view>

namespace llmesh::dist {

namespace {

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// The number after `prefix` at the start of / inside `name`, or -1.
int64_t number_after(std::string_view name, std::string_view prefix) {
  const size_t at = name.find(prefix);
  if (at == std::string_view::npos) return -1;
  int64_t value = -1;
  const char* begin = name.data() + at + prefix.size();
  std::from_chars(begin, name.data() + name.size(), value);
  return value;
}

// Matrices tensor parallel splits by heads or by FFN columns.
bool tp_sharded(std::string_view name) {
  for (std::string_view part : {".attn_q.", ".attn_k.", ".attn_v.", ".attn_output.", ".ffn_gate.", ".ffn_up.",
                                ".ffn_down.", "_exps.", "_shexp."})
    if (contains(name, part)) return true;
  return false;
}

}  // namespace

CommPlan plan_comm(const model::ModelConfig& config, const ParallelLayout& layout) {
  CommPlan p;
  const ParallelSizes& s = layout.sizes;
  const int64_t hidden_bytes = config.hidden_size * int64_t(sizeof(float));
  p.width = s.width();
  // Per layer: attention and FFN with --tp; with --ep alone only the MoE layers' FFN (the
  // leading dense layers of GLM-4.5 are replicated, nothing to sum).
  const int64_t per_layer = (s.tp > 1 ? 1 : 0) + (s.tp > 1 ? 1 : 0);
  const int64_t per_moe_layer = s.tp == 1 && s.ep > 1 && config.is_moe() ? 1 : 0;
  const int64_t front = layout.stage_layers.front();
  p.reductions_per_stage =
      per_layer * front + per_moe_layer * std::max<int64_t>(0, front - config.first_dense_layers);
  p.reductions_in_model =
      per_layer * config.num_layers + per_moe_layer * (config.num_layers - config.first_dense_layers);
  p.reduce_bytes = p.reductions_per_stage * hidden_bytes;
  p.num_boundaries = s.pp - 1;
  p.handoff_bytes = hidden_bytes;
  p.logits_bytes = layout.logits_rank() == 0 ? 0 : config.vocab_size * int64_t(sizeof(float));
  return p;
}

double CommPlan::decode_seconds(double bytes_per_s, double latency_s) const {
  double t = 0;
  if (width > 1 && reductions_per_stage > 0) {
    const double per_reduction = double(reduce_bytes) / double(reductions_per_stage);
    t += double(reductions_in_model) * 2.0 * (width - 1) * (latency_s + per_reduction / width / bytes_per_s);
  }
  t += double(num_boundaries) * (latency_s + double(handoff_bytes) / bytes_per_s);
  if (logits_bytes > 0) t += latency_s + double(logits_bytes) / bytes_per_s;
  return t;
}

PlacementCosts placement_costs(const model::WeightStore& weights, const model::ModelConfig& config) {
  PlacementCosts c;
  int64_t dense = 0;
  for (const std::string& name : weights.names()) {
    const int64_t size = int64_t(weights.get(name).num_bytes());
    if (name == "token_embd.weight") c.embedding_bytes = size;
    if (name == "output.weight") c.head_bytes = size;
    if (name.starts_with("blk.") && number_after(name, "_exps.") < 0) dense += size;
  }
  if (!weights.has("output.weight")) c.head_bytes = c.embedding_bytes;  // tied: the last stage keeps a copy
  c.dense_layer_bytes = config.num_layers > 0 ? dense / config.num_layers : 0;
  return c;
}

std::vector<int64_t> rank_weight_bytes(const model::WeightStore& weights, const model::ModelConfig& config,
                                       const ParallelLayout& layout) {
  const int world = layout.sizes.world();
  std::vector<int64_t> bytes(size_t(world), 0);
  std::vector<model::ModelShard> shards;
  for (int r = 0; r < world; ++r) shards.push_back(layout.shard(r));
  const bool tied = !weights.has("output.weight");
  for (const std::string& name : weights.names()) {
    const int64_t size = int64_t(weights.get(name).num_bytes());
    const int64_t layer = name.starts_with("blk.") ? number_after(name, "blk.") : -1;
    const int64_t expert = number_after(name, "_exps.");
    for (int r = 0; r < world; ++r) {
      const model::ModelShard& s = shards[size_t(r)];
      const bool first = s.first_stage(), logits = s.computes_logits(config.num_layers);
      if (layer < 0) {
        const bool holds = name == "token_embd.weight" ? first || (tied && logits)
                           : name.starts_with("output") ? logits
                                                        : true;
        if (holds) bytes[size_t(r)] += size;
        continue;
      }
      if (layer < s.layer_begin || layer >= s.end_layer(config.num_layers)) continue;
      if (expert >= 0 && (expert < s.expert_begin || expert >= s.end_expert(config.num_experts))) continue;
      // shared experts with expert parallel alone: lane 0 holds them (model/blocks/feed_forward.h)
      if (contains(name, "_shexp.") && s.tp_size == 1 && s.lane != 0) continue;
      bytes[size_t(r)] += tp_sharded(name) ? size / s.tp_size : size;
    }
  }
  return bytes;
}

}  // namespace llmesh::dist
