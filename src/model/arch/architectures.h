// Factories of the built-in architectures; model/registry.cpp maps names to them.
#pragma once

#include <memory>

#include "kernels/backend.h"
#include "model/model.h"

namespace llmesh::model {

std::unique_ptr<Model> create_llama_family(const ModelFiles& files, std::shared_ptr<kernels::Backend> backend,
                                           const ModelShard& shard);
std::unique_ptr<Model> create_qwen3_moe(const ModelFiles& files, std::shared_ptr<kernels::Backend> backend,
                                        const ModelShard& shard);
std::unique_ptr<Model> create_deepseek2(const ModelFiles& files, std::shared_ptr<kernels::Backend> backend,
                                        const ModelShard& shard);
std::unique_ptr<Model> create_gpt_oss(const ModelFiles& files, std::shared_ptr<kernels::Backend> backend,
                                      const ModelShard& shard);
std::unique_ptr<Model> create_glm4_moe(const ModelFiles& files, std::shared_ptr<kernels::Backend> backend,
                                       const ModelShard& shard);

}  // namespace llmesh::model
