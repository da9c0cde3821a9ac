// Factories of the built-in architectures; model/registry.cpp maps names to them.
#pragma once

#include <memory>

#include "core/thread_pool.h"
#include "model/model.h"

namespace llmesh {

std::unique_ptr<Model> create_llama_family(const ModelFiles& files, ThreadPool& pool);
std::unique_ptr<Model> create_qwen3_moe(const ModelFiles& files, ThreadPool& pool);

}  // namespace llmesh
