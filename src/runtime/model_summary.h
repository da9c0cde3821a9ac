// What a model's files amount to: parameters (total, and active per token
// for MoE), weight bytes by element type and the dominant one (what a user
// calls the file's quantization: q4_k for a Q4_K_M file). Shared by
// `llmesh inspect` and the console's model views.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "model/model_files.h"

namespace llmesh::runtime {

struct DTypeShare {
  int64_t num_tensors = 0, num_bytes = 0;
};

struct ModelSummary {
  int64_t num_parameters = 0, num_active_parameters = 0;
  int64_t weight_bytes = 0;
  std::map<std::string, DTypeShare> by_dtype;  // dtype name -> share
  std::string quantization;                   // the dtype holding the most bytes
};

ModelSummary summarize(const model::ModelFiles& files);

}  // namespace llmesh::runtime
