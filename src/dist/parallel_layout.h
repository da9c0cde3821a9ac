// Which part of the model each rank of a job holds.
//
// A job has pp pipeline stages of `width` ranks each; rank r is lane r % width of
// stage r / width (rank 0: stage 0, lane 0, which serves HTTP and schedules).
// Within a stage:
//   --tp N  shards attention heads (with their KV heads) and every SwiGLU's
//           intermediate columns over N lanes; the partial outputs are all-reduced
//   --ep N  partitions the routed experts of a MoE layer over N lanes; the router
//           is replicated; with --tp 1 attention and dense FFNs are replicated
// width = max(tp, ep); when both are above 1 they must be equal (the lanes that
// shard attention also own the experts, as vLLM's expert parallel does).
// Shared experts (GLM-4.5) are never split by expert: with --tp they are sliced
// like a dense FFN, with --ep alone lane 0 computes them (model/blocks/feed_forward.h).
//
// Layers per stage and experts per lane come from --layer-split / --expert-split
// when given, else in proportion to each rank's usable memory (--placement auto).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model_config.h"
#include "model/model_shard.h"

namespace llmesh::dist {

struct ParallelSizes {
  int tp = 1, pp = 1, ep = 1;

  int width() const { return tp > ep ? tp : ep; }
  int world() const { return pp * width(); }
  bool parallel() const { return world() > 1; }
  std::string to_string() const;  // "tp 2 × pp 2"
};

struct ParallelLayout {
  ParallelSizes sizes;
  std::vector<int64_t> stage_layers;  // [pp] layers of each stage, in order
  std::vector<int64_t> lane_experts;  // [width] experts of each lane (ep > 1), else empty

  int stage_of(int rank) const { return rank / sizes.width(); }
  int lane_of(int rank) const { return rank % sizes.width(); }
  int rank_of(int stage, int lane) const { return stage * sizes.width() + lane; }
  // The rank whose last-stage lane 0 computes the logits.
  int logits_rank() const { return rank_of(sizes.pp - 1, 0); }
  model::ModelShard shard(int rank) const;
  // One line per rank: "rank 1  stage 0 lane 1  layers 0-13  experts 64-127  heads 8/16".
  std::string describe(const model::ModelConfig& config) const;
  // Short, stable text that names the layout: part of the KV cache namespace, since
  // a rank's blocks hold only its layers and heads.
  std::string key() const;
};

// The comma-separated split of --layer-split / --expert-split ("10,9,9"); empty text: none.
std::vector<int64_t> parse_split(const std::string& text, const char* flag);

// The comma-separated GiB of --rank-memory-gib in `inspect --plan` ("96,84,84,84"); empty text: none.
std::vector<double> parse_rank_memory_gib(const std::string& text, const char* flag);

// `total` in parts proportional to `weights` (each at least 1): largest remainder.
std::vector<int64_t> split_by_weight(int64_t total, const std::vector<double>& weights);

// The weights that do not shrink with the split, for placement: without them
// a rank that also holds the embedding or the LM head would get as many layers
// as one that does not, and run out of memory first.
struct PlacementCosts {
  int64_t embedding_bytes = 0;     // on every lane of the first stage
  int64_t head_bytes = 0;          // on the logits lane of the last stage (the embedding again when tied)
  int64_t dense_layer_bytes = 0;   // one layer's weights besides its routed experts (split over tp)
};

// Checks the sizes against the model (heads and KV heads divisible by tp, ep only for
// MoE, at most one layer per stage ...) and fixes the splits: the explicit ones,
// validated (counts, sums), or in proportion to what `rank_memory` ([world]
// usable bytes per rank) leaves after `costs`. Error naming the flag and what is wrong.
ParallelLayout plan_layout(const model::ModelConfig& config, const ParallelSizes& sizes,
                           const std::vector<int64_t>& layer_split, const std::vector<int64_t>& expert_split,
                           const std::vector<double>& rank_memory, const PlacementCosts& costs = {});

}  // namespace llmesh::dist
