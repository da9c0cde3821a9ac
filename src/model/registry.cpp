// Architecture registry: `general.architecture` / HF model type -> factory.
// Adding an architecture: a file in model/arch/ and one line here.
#include <functional>
#include <map>

#include "core/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "model/arch/architectures.h"
#include "model/model_files.h"

namespace llmesh::model {

namespace {
using Factory =
    std::function<std::unique_ptr<Model>(const ModelFiles&, std::shared_ptr<kernels::Backend>, const ModelShard&)>;

const std::map<std::string, Factory>& registry() {
  static const std::map<std::string, Factory> factories = {
      {"llama", create_llama_family},
      {"qwen2", create_llama_family},
      {"qwen3", create_llama_family},
      {"qwen3moe", create_qwen3_moe},
      {"glm4moe", create_glm4_moe},
      {"deepseek2", create_deepseek2},
      {"gpt-oss", create_gpt_oss},
  };
  return factories;
}
}  // namespace

std::unique_ptr<Model> create_model(const ModelFiles& files, std::shared_ptr<kernels::Backend> backend,
                                    const ModelShard& shard) {
  auto it = registry().find(files.config.arch);
  if (it == registry().end()) fail("{}: unknown architecture '{}'", files.path, files.config.arch);
  // Every matrix is a matmul weight (or the embedding table, which DecoderModel checks): refuse
  // now what the backend cannot run.
  for (const std::string& name : files.weights.names()) {
    const Tensor& t = files.weights.get(name);
    if (t.num_dims() < 2) continue;  // small vectors are converted to f32 at load
    check(backend->supports(kernels::Op::Matmul, t.dtype),
          "{}: tensor {} is {}, which the {} backend cannot multiply", files.path, name, dtype_name(t.dtype),
          backend->name());
  }
  return it->second(files, std::move(backend), shard);
}

kv::KvCacheShape kv_cache_shape(const ModelConfig& config, int64_t block_size, int64_t num_blocks, DType dtype) {
  kv::KvCacheShape shape{config.num_layers, config.num_kv_heads, config.kv_row_dim(), block_size, num_blocks, dtype};
  if (config.is_mla()) shape.shared_value_dim = config.kv_lora_rank;
  return shape;
}

std::unique_ptr<Model> create_model(const ModelFiles& files, ThreadPool& pool, const ModelShard& shard) {
  return create_model(files, std::make_shared<kernels::CpuBackend>(pool), shard);
}

std::vector<std::string> registered_architectures() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : registry()) names.push_back(name);
  return names;
}

}  // namespace llmesh::model
