#include "model/model_config.h"

#include <algorithm>
#include <cmath>

namespace llmesh::model {

int64_t ModelConfig::max_context() const {
  const RopeScaling& s = rope_scaling;
  if (s.type == "linear" || s.type == "dynamic") return int64_t(std::floor(double(max_position) * s.factor));
  if (s.type == "yarn") {
    const int64_t original = s.original_max_position > 0 ? s.original_max_position : max_position;
    return std::max(max_position, int64_t(std::floor(double(original) * s.factor)));
  }
  return max_position;  // none, llama3 (whose max_position is already the scaled length)
}

}  // namespace llmesh::model
