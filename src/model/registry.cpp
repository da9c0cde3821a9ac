// Architecture registry: `general.architecture` / HF model type -> factory.
// Adding an architecture: a file in model/arch/ and one line here.
#include <functional>
#include <map>

#include "core/error.h"
#include "model/arch/architectures.h"
#include "model/model_files.h"

namespace llmesh {

namespace {
using Factory = std::function<std::unique_ptr<Model>(const ModelFiles&, ThreadPool&)>;

const std::map<std::string, Factory>& registry() {
  static const std::map<std::string, Factory> factories = {
      {"llama", create_llama_family},
      {"qwen2", create_llama_family},
      {"qwen3", create_llama_family},
      {"qwen3moe", create_qwen3_moe},
  };
  return factories;
}
}  // namespace

std::unique_ptr<Model> create_model(const ModelFiles& files, ThreadPool& pool) {
  auto it = registry().find(files.config.arch);
  if (it == registry().end()) fail("{}: unknown architecture '{}'", files.path, files.config.arch);
  return it->second(files, pool);
}

std::vector<std::string> registered_architectures() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : registry()) names.push_back(name);
  return names;
}

}  // namespace llmesh
