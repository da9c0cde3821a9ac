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

}  // namespace

int64_t ModelConfig::max_context() const {
  const int64_t context = scaled_context(*this);
  return sliding_window > 0 ? std::min(context, sliding_window) : context;
}

}  // namespace llmesh::model
