// gpt-oss's Hugging Face checkpoints keep each layer's experts in four stacked tensors,
// laid out for x @ W and with gate and up interleaved:
//   model.layers.N.mlp.experts.gate_up_proj       [experts, hidden, 2 * ffn]  column 2i gate i, 2i + 1 up i
//   model.layers.N.mlp.experts.gate_up_proj_bias  [experts, 2 * ffn]          the same interleaving
//   model.layers.N.mlp.experts.down_proj          [experts, ffn, hidden]
//   model.layers.N.mlp.experts.down_proj_bias     [experts, hidden]
// llmesh's canonical experts are {out, in} matrices, one per expert and projection
// (blk.N.ffn_{gate,up,down}_exps.E.{weight,bias}): these are copies, transposed and
// de-interleaved once at load. The original MXFP4 release (..._blocks / ..._scales) is refused.
#pragma once

#include <string>

#include "core/tensor.h"
#include "model/weight_store.h"

namespace llmesh::model {

// True when `t` is one of the fused expert tensors of layer `layer`, after adding its per-expert
// canonical tensors to `weights` (which keeps the copies). Error for quantized or misshapen ones.
bool add_hf_fused_experts(const Tensor& t, int64_t layer, WeightStore& weights);

}  // namespace llmesh::model
