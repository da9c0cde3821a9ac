#include "model/model_identity.h"

#include <xxhash.h>

#include <algorithm>

#include <fmt/format.h>

#include "model/model_config.h"
#include "model/weight_store.h"

namespace llmesh::model {

namespace {

constexpr size_t kWholeTensorBytes = 64 << 10;
constexpr size_t kWindowBytes = 4 << 10;
constexpr size_t kNumWindows = 16;

}  // namespace

std::string model_identity(const WeightStore& weights, const ModelConfig& config) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  for (const Tensor& t : weights.file_tensors()) {
    const std::string header = fmt::format("{}|{}|{}|", t.name, dtype_name(t.dtype), t.shape_string());
    XXH3_64bits_update(state, header.data(), header.size());
    const auto* bytes = static_cast<const uint8_t*>(t.data);
    const size_t size = t.num_bytes();
    if (bytes == nullptr || size == 0) continue;
    if (size <= kWholeTensorBytes) {
      XXH3_64bits_update(state, bytes, size);
      continue;
    }
    for (size_t w = 0; w < kNumWindows; ++w) {  // first and last windows included
      const size_t begin = (size - kWindowBytes) * w / (kNumWindows - 1);
      XXH3_64bits_update(state, bytes + begin, kWindowBytes);
    }
  }
  // K is stored after RoPE: a scaling set on the command line (or in the metadata) changes it.
  const RopeScaling& s = config.rope_scaling;
  if (s.enabled()) {
    const std::string rope = fmt::format("rope|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", s.type, s.factor,
                                         s.original_max_position, s.low_freq_factor, s.high_freq_factor, s.beta_fast,
                                         s.beta_slow, s.attention_factor, s.mscale, s.mscale_all_dim,
                                         s.attn_factor_multiplier, s.ext_factor, s.truncate);
    XXH3_64bits_update(state, rope.data(), rope.size());
  }
  // So does a sliding window: past it, every layer's input (and the K/V above layer 0) differs.
  if (config.sliding_window > 0) {
    std::string window = fmt::format("window|{}|", config.sliding_window);
    for (bool windowed : config.window_layers) window += windowed ? '1' : '0';
    XXH3_64bits_update(state, window.data(), window.size());
  }
  const uint64_t digest = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return fmt::format("{:016x}", digest);
}

}  // namespace llmesh::model
