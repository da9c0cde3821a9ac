// RoPE frequencies: inv_freq[i] = theta^(-2i/d), i < d/2 over the rotated dims d (config.rope_dim():
// head_dim, or fewer with partial rotary), changed by the
// config's RoPE scaling, or divided by the `rope_freqs.weight` factors when the GGUF file
// carries them (how llama.cpp stores Llama 3 scaling):
//   linear   inv_freq / factor
//   dynamic  NTK-aware: theta' = theta * (factor^2 - factor + 1)^(d / (d - 2)), i.e. the dynamic
//            base at the full scaled context. Static, as vLLM does it: Hugging Face grows the
//            base with each sequence's length, which would make cached K depend on how long the
//            sequence later gets, so no prefix cache could hold them.
//   yarn     per pair, a ramp between interpolation (inv_freq / factor) for the long wavelengths
//            and extrapolation (unchanged) for the short ones, bounded by beta_fast/beta_slow
//            rotations over the original context; and an attention factor (0.1 ln(factor) + 1,
//            or DeepSeek's mscale ratio) that multiplies cos and sin.
//   llama3   Llama 3.1's wavelength bands (kept, smoothed, divided by factor).
#pragma once

#include <vector>

#include "model/model_config.h"

namespace llmesh::model {

class WeightStore;

std::vector<float> rope_inv_freq(const ModelConfig& config, const WeightStore& weights);

// The attention factors YaRN implies (rope_attention_factor, mla_score_factor) are in model/model_config.h.

}  // namespace llmesh::model
