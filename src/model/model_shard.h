// Which part of a model one rank holds, for tensor, pipeline and expert
// parallel runs (dist/parallel_layout.h decides it; this layer only obeys).
//
//   layers [layer_begin, layer_end)   pipeline stage: a contiguous layer range;
//                                     the first stage embeds, the last computes logits
//   tp_rank / tp_size                 tensor parallel: this rank's attention heads
//                                     (and their KV heads), and its slice of every
//                                     SwiGLU's intermediate columns (dense and experts)
//   experts [expert_begin, expert_end) expert parallel: the routed experts it computes;
//                                     the router is replicated
//
// A block whose output is a partial sum over the ranks of its stage (tensor
// parallel o_proj / down_proj, a subset of experts) is summed by `reduce`
// before it joins the residual stream. The default shard is the whole model.
#pragma once

#include <cstdint>

namespace llmesh::model {

// Sums a [n] float buffer in place over the ranks of one pipeline stage.
class StageReduce {
 public:
  virtual ~StageReduce() = default;
  virtual void sum(float* data, int64_t n) = 0;
};

struct ModelShard {
  int64_t layer_begin = 0;
  int64_t layer_end = -1;  // -1: to the last layer
  int lane = 0;  // this rank's index within its stage; lane 0 of the last stage computes the logits
  int tp_rank = 0;
  int tp_size = 1;
  int64_t expert_begin = 0;
  int64_t expert_end = -1;  // -1: every expert
  StageReduce* reduce = nullptr;  // required when a block's output is partial

  int64_t end_layer(int64_t num_layers) const { return layer_end < 0 ? num_layers : layer_end; }
  int64_t end_expert(int64_t num_experts) const { return expert_end < 0 ? num_experts : expert_end; }
  bool first_stage() const { return layer_begin == 0; }
  bool last_stage(int64_t num_layers) const { return end_layer(num_layers) == num_layers; }
  bool computes_logits(int64_t num_layers) const { return last_stage(num_layers) && lane == 0; }
  bool whole(int64_t num_layers, int64_t num_experts) const {
    return first_stage() && last_stage(num_layers) && tp_size == 1 && expert_begin == 0 &&
           end_expert(num_experts) == num_experts;
  }
};

}  // namespace llmesh::model
