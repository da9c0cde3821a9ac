#include "dist/parallel_layout.h"

#include <algorithm>
#include <charconv>
#include <numeric>

#include <fmt/format.h>

#include "core/error.h"

namespace llmesh::dist {

std::string ParallelSizes::to_string() const {
  std::vector<std::string> parts;
  if (tp > 1) parts.push_back(fmt::format("tp {}", tp));
  if (pp > 1) parts.push_back(fmt::format("pp {}", pp));
  if (ep > 1) parts.push_back(fmt::format("ep {}", ep));
  return parts.empty() ? "1 rank" : fmt::format("{}", fmt::join(parts, " x "));
}

model::ModelShard ParallelLayout::shard(int rank) const {
  model::ModelShard s;
  const int stage = stage_of(rank), lane = lane_of(rank);
  s.layer_begin = std::accumulate(stage_layers.begin(), stage_layers.begin() + stage, int64_t(0));
  s.layer_end = s.layer_begin + stage_layers[size_t(stage)];
  s.lane = lane;
  if (sizes.tp > 1) {
    s.tp_rank = lane;
    s.tp_size = sizes.tp;
  }
  if (!lane_experts.empty()) {
    s.expert_begin = std::accumulate(lane_experts.begin(), lane_experts.begin() + lane, int64_t(0));
    s.expert_end = s.expert_begin + lane_experts[size_t(lane)];
  }
  return s;
}

std::string ParallelLayout::describe(const model::ModelConfig& config) const {
  std::string out;
  for (int r = 0; r < sizes.world(); ++r) {
    const model::ModelShard s = shard(r);
    out += fmt::format("    rank {}: stage {} lane {}, layers {}-{}", r, stage_of(r), lane_of(r), s.layer_begin,
                       s.layer_end - 1);
    if (s.tp_size > 1) out += fmt::format(", heads {}/{}", config.num_heads / s.tp_size, config.num_heads);
    if (config.is_moe()) {
      out += fmt::format(", experts {}-{} of {}", s.expert_begin, s.end_expert(config.num_experts) - 1,
                         config.num_experts);
    }
    if (r == 0) out += " (serves, schedules)";
    if (r == logits_rank()) out += " (logits)";
    out += "\n";
  }
  return out;
}

std::string ParallelLayout::key() const {
  return fmt::format("tp{}.pp{}.ep{}.layers{}.experts{}", sizes.tp, sizes.pp, sizes.ep, fmt::join(stage_layers, "-"),
                     fmt::join(lane_experts, "-"));
}

namespace {

// Positive numbers separated by commas; `example` shows the form in the error.
template <typename T>
std::vector<T> parse_positive_list(const std::string& text, const char* flag, const char* example) {
  std::vector<T> out;
  if (text.empty()) return out;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t end = std::min(text.find(',', begin), text.size());
    T value = 0;
    const auto [ptr, ec] = std::from_chars(text.data() + begin, text.data() + end, value);
    check(ec == std::errc() && ptr == text.data() + end && value > 0,
          "{} {}: expected positive numbers separated by commas, like {}", flag, text, example);
    out.push_back(value);
    begin = end + 1;
  }
  return out;
}

}  // namespace

std::vector<int64_t> parse_split(const std::string& text, const char* flag) {
  return parse_positive_list<int64_t>(text, flag, "10,9,9");
}

std::vector<double> parse_rank_memory_gib(const std::string& text, const char* flag) {
  return parse_positive_list<double>(text, flag, "96,84,84,84");
}

std::vector<int64_t> split_by_weight(int64_t total, const std::vector<double>& weights) {
  const int64_t n = int64_t(weights.size());
  check(n > 0 && total >= n, "cannot split {} into {} non-empty parts", total, n);
  double sum = 0;
  for (double w : weights) sum += std::max(w, 0.0);
  std::vector<int64_t> parts(size_t(n), 1);  // everyone gets one; the rest by weight
  const int64_t rest = total - n;
  std::vector<std::pair<double, int64_t>> remainders;
  int64_t given = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double share = sum > 0 ? rest * std::max(weights[size_t(i)], 0.0) / sum : double(rest) / double(n);
    const int64_t whole = int64_t(share);
    parts[size_t(i)] += whole;
    given += whole;
    remainders.push_back({share - double(whole), -i});  // ties: the earlier part first
  }
  std::sort(remainders.rbegin(), remainders.rend());
  for (int64_t k = 0; k < rest - given; ++k) ++parts[size_t(-remainders[size_t(k)].second)];
  return parts;
}

ParallelLayout plan_layout(const model::ModelConfig& config, const ParallelSizes& sizes,
                           const std::vector<int64_t>& layer_split, const std::vector<int64_t>& expert_split,
                           const std::vector<double>& rank_memory, const PlacementCosts& costs) {
  check(sizes.tp >= 1 && sizes.pp >= 1 && sizes.ep >= 1, "--tp, --pp and --ep must be at least 1");
  check(sizes.tp == 1 || sizes.ep == 1 || sizes.tp == sizes.ep,
        "--tp {} with --ep {}: expert parallel runs on the tensor-parallel lanes, so give them equal or one of them 1",
        sizes.tp, sizes.ep);
  check(sizes.tp == 1 || !config.is_mla(),
        "--tp {}: multi-head latent attention (DeepSeek, Kimi) does not split over tensor-parallel ranks (its one "
        "latent row serves every head); use --pp or --ep",
        sizes.tp);
  check(config.num_heads % sizes.tp == 0 && config.num_kv_heads % sizes.tp == 0,
        "--tp {}: the model's {} attention heads and {} KV heads must both divide by it", sizes.tp, config.num_heads,
        config.num_kv_heads);
  check(sizes.ep == 1 || config.is_moe(), "--ep {}: the model is dense; expert parallel needs a mixture of experts",
        sizes.ep);
  check(sizes.ep <= std::max<int64_t>(config.num_experts, 1), "--ep {}: the model has only {} experts", sizes.ep,
        config.num_experts);
  check(sizes.pp <= config.num_layers, "--pp {}: the model has only {} layers", sizes.pp, config.num_layers);
  check(int(rank_memory.size()) == sizes.world(), "layout for {} ranks got {} memory sizes", sizes.world(),
        rank_memory.size());

  ParallelLayout layout;
  layout.sizes = sizes;
  const int width = sizes.width();
  if (!layer_split.empty()) {
    check(int(layer_split.size()) == sizes.pp, "--layer-split names {} stages; --pp is {}", layer_split.size(),
          sizes.pp);
    const int64_t sum = std::accumulate(layer_split.begin(), layer_split.end(), int64_t(0));
    check(sum == config.num_layers, "--layer-split adds up to {} layers; the model has {}", sum, config.num_layers);
    layout.stage_layers = layer_split;
  } else {
    std::vector<double> stage_memory;  // a stage holds as many layers as its fullest lane leaves room for
    for (int s = 0; s < sizes.pp; ++s) {
      double m = rank_memory[size_t(s * width)] - (s == sizes.pp - 1 ? double(costs.head_bytes) : 0);
      for (int l = 1; l < width; ++l) m = std::min(m, rank_memory[size_t(s * width + l)]);
      if (s == 0) m -= double(costs.embedding_bytes);
      stage_memory.push_back(std::max(m, 1.0));  // one that cannot fit still gets a layer (inspect --plan says so)
    }
    layout.stage_layers = split_by_weight(config.num_layers, stage_memory);
  }
  if (sizes.ep > 1) {
    if (!expert_split.empty()) {
      check(int(expert_split.size()) == width, "--expert-split names {} lanes; --ep is {}", expert_split.size(),
            sizes.ep);
      const int64_t sum = std::accumulate(expert_split.begin(), expert_split.end(), int64_t(0));
      check(sum == config.num_experts, "--expert-split adds up to {} experts; the model has {}", sum,
            config.num_experts);
      layout.lane_experts = expert_split;
    } else {
      // A lane holds its experts in every stage: it gets them in proportion to
      // the room its fullest rank has left after the rest of its weights.
      std::vector<double> lane_memory;
      for (int l = 0; l < width; ++l) {
        double m = 0;
        for (int s = 0; s < sizes.pp; ++s) {
          double fixed = double(layout.stage_layers[size_t(s)] * costs.dense_layer_bytes / sizes.tp);
          if (s == 0) fixed += double(costs.embedding_bytes);
          if (s == sizes.pp - 1 && l == 0) fixed += double(costs.head_bytes);
          const double left = rank_memory[size_t(s * width + l)] - fixed;
          m = s == 0 ? left : std::min(m, left);
        }
        lane_memory.push_back(std::max(m, 1.0));
      }
      layout.lane_experts = split_by_weight(config.num_experts, lane_memory);
    }
  } else {
    check(expert_split.empty(), "--expert-split needs --ep");
  }
  return layout;
}

}  // namespace llmesh::dist
