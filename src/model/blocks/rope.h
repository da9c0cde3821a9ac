// RoPE frequencies: inv_freq[i] = theta^(-2i/head_dim), i < head_dim/2, with
// Llama 3 scaling applied when the config asks for it (HF) or divided by the
// `rope_freqs.weight` factors when the GGUF file carries them.
#pragma once

#include <vector>

#include "model/model_config.h"

namespace llmesh::model {

class WeightStore;

std::vector<float> rope_inv_freq(const ModelConfig& config, const WeightStore& weights);

}  // namespace llmesh::model
