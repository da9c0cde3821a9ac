#include "model/model_config.h"

#include <algorithm>
#include <cmath>

namespace llmesh::model {

namespace {

int64_t scaled_context(const ModelConfig& c) {
  const RopeScaling& s = c.rope_scaling;
  if (s.type == "linear" || s.type == "dynamic") return int64_t(std::floor(double(c.max_position) * s.factor));
  if (s.type == "yarn") {
    const int64_t original = s.original_max_position > 0 ? s.original_max_position : c.max_position;
    return std::max(c.max_position, int64_t(std::floor(double(original) * s.factor)));
  }
  return c.max_position;  // none, llama3 (whose max_position is already the scaled length)
}

double yarn_mscale(double factor, double mscale) { return factor <= 1 ? 1.0 : 0.1 * mscale * std::log(factor) + 1.0; }

}  // namespace

float rope_attention_factor(const ModelConfig& config) {
  const RopeScaling& s = config.rope_scaling;
  if (s.type != "yarn") return 1.0f;
  if (s.attention_factor > 0) return s.attention_factor;
  const double derived = s.mscale != 0 && s.mscale_all_dim != 0
                             ? yarn_mscale(s.factor, s.mscale) / yarn_mscale(s.factor, s.mscale_all_dim)
                             : yarn_mscale(s.factor, 1.0);
  return float(derived * s.attn_factor_multiplier);
}

float mla_score_factor(const ModelConfig& config) {
  const RopeScaling& s = config.rope_scaling;
  if (s.type != "yarn" || s.mscale_all_dim == 0) return 1.0f;
  const double m = yarn_mscale(s.factor, s.mscale_all_dim);
  return float(m * m);
}

int64_t ModelConfig::max_context() const { return scaled_context(*this); }

}  // namespace llmesh::model
