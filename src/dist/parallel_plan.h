// What a layout costs before anything is loaded: the weight bytes each rank
// holds and the bytes the ranks exchange per token (`llmesh inspect --plan`,
// docs/parallel.md). The counts follow the sharded executor:
//   tensor parallel   every layer all-reduces its attention output and its FFN
//                     output over the stage's lanes (hidden floats per token each)
//   expert parallel   every MoE layer all-reduces its FFN output (with --tp 1
//                     attention is replicated, so only that one)
//   pipeline          each stage boundary sends the residual stream (hidden
//                     floats per token) to the same lane of the next stage
//   logits            when the last stage is not rank 0's, it sends each sampled
//                     row (vocab floats) to rank 0
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dist/parallel_layout.h"
#include "model/model_config.h"
#include "model/weight_store.h"

namespace llmesh::dist {

struct CommPlan {
  int64_t reductions_per_stage = 0;  // all-reduce calls per step on rank 0's stage (any token count)
  int64_t reductions_in_model = 0;   // the same over every stage (they run one after another)
  int64_t reduce_bytes = 0;          // per token: rank 0's all-reduce input over its layers
  int64_t handoff_bytes = 0;         // per token, per stage boundary
  int64_t num_boundaries = 0;
  int64_t logits_bytes = 0;          // per sampled token (0 when rank 0 computes the logits)
  int width = 1;                     // ranks per stage (the all-reduce group)

  // Bytes rank 0's communicators count per decoded token (CommCounters.bytes_sent:
  // its reductions' input and its hand-off to stage 1).
  int64_t rank0_sent_per_token() const { return reduce_bytes + (num_boundaries > 0 ? handoff_bytes : 0); }
  // Seconds one decode step of one sequence spends on a link of `bytes_per_s`
  // with `latency_s` per message: ring all-reduces (2(w-1) messages of 1/w of
  // the data each) on every stage, then the hand-offs and the logits.
  double decode_seconds(double bytes_per_s, double latency_s) const;
};

CommPlan plan_comm(const model::ModelConfig& config, const ParallelLayout& layout);

// Weight bytes each rank holds ([world]), from the canonical tensor names:
// blk.N.* on the stage of layer N, sharded matrices split over tp, experts over
// their lanes, norms and routers replicated; the embedding on stage 0's lanes
// and the LM head on the logits rank.
// The embedding, LM head and per-layer dense bytes placement subtracts.
PlacementCosts placement_costs(const model::WeightStore& weights, const model::ModelConfig& config);

std::vector<int64_t> rank_weight_bytes(const model::WeightStore& weights, const model::ModelConfig& config,
                                       const ParallelLayout& layout);

}  // namespace llmesh::dist
