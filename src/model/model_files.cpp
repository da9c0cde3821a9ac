#include "model/model_files.h"

#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "core/error.h"
#include "core/log.h"
#include "format/safetensors.h"
#include "model/gguf_config.h"
#include "model/hf_config.h"
#include "model/hf_fused_experts.h"

namespace llmesh::model {

namespace fs = std::filesystem;
namespace ju = format::json_util;

namespace {

// The layer of a "model.layers.N...." tensor name, or -1.
int64_t hf_layer_of(const std::string& name) {
  const std::string layers = "model.layers.";
  if (name.rfind(layers, 0) != 0) return -1;
  int64_t layer = 0;
  size_t i = layers.size();
  if (i >= name.size() || !std::isdigit(static_cast<unsigned char>(name[i]))) return -1;
  for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) && layer < (int64_t(1) << 40); ++i) {
    layer = layer * 10 + (name[i] - '0');
  }
  return layer;
}

bool starts_with_gguf_magic(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && std::memcmp(magic, "GGUF", 4) == 0;
}

// The safetensors files of a HF directory: the shards named by
// model.safetensors.index.json, or model.safetensors. Also returns, for an
// index, which file each tensor should be in.
std::vector<std::string> safetensors_files(const fs::path& dir, std::map<std::string, std::string>* expected_file) {
  const fs::path index_path = dir / "model.safetensors.index.json";
  if (fs::exists(index_path)) {
    const std::string source = index_path.string();
    const ju::Json index = ju::parse_file(source);
    check(index.is_object(), "{}: must be a JSON object", source);
    auto map = index.find("weight_map");
    check(map != index.end() && map->is_object() && !map->empty(), "{}: missing or empty 'weight_map'", source);
    std::set<std::string> files;
    for (const auto& [tensor, file] : map->items()) {
      check(file.is_string(), "{}: weight_map['{}'] must be a file name", source, tensor);
      const std::string name = file.get<std::string>();
      // Shards live next to the index; refuse paths that would leave the directory.
      check(!name.empty() && name.find('/') == std::string::npos && name != "." && name != "..",
            "{}: weight_map['{}'] = '{}' is not a file name in the model directory", source, tensor, name);
      files.insert(name);
      (*expected_file)[tensor] = name;
    }
    std::vector<std::string> paths;
    for (const std::string& f : files) paths.push_back((dir / f).string());
    return paths;
  }
  const fs::path single = dir / "model.safetensors";
  check(fs::exists(single), "{}: no model.safetensors or model.safetensors.index.json", dir.string());
  return {single.string()};
}

ModelFiles open_hf_directory(const std::string& path) {
  const fs::path dir(path);
  ModelFiles files;
  files.path = path;
  files.format = "safetensors";
  const fs::path normalized = dir.lexically_normal();
  files.name = (normalized.has_filename() ? normalized.filename() : normalized.parent_path().filename()).string();

  const fs::path config_path = dir / "config.json";
  check(fs::exists(config_path), "{}: not a model directory (no config.json)", path);
  const ju::Json config = ju::parse_file(config_path.string());
  files.config = parse_hf_config(config, config_path.string());

  files.weights = WeightStore(path);
  std::map<std::string, std::string> expected_file;
  size_t num_ignored = 0, num_past_last_layer = 0;
  std::string first_ignored;
  for (const std::string& shard_path : safetensors_files(dir, &expected_file)) {
    const format::SafetensorsFile shard = format::SafetensorsFile::open(shard_path);
    files.weights.keep_mapping(shard.mapping());
    const std::string shard_name = fs::path(shard_path).filename().string();
    for (const Tensor& t : shard.tensors()) {
      auto expected = expected_file.find(t.name);
      if (expected != expected_file.end()) {
        check(expected->second == shard_name, "{}: tensor '{}' is in {} but the index says {}", path, t.name,
              shard_name, expected->second);
        expected_file.erase(expected);
      }
      files.weights.add_file_tensor(t);
      // Layers past num_hidden_layers: GLM-4.5 / DeepSeek V3 multi-token-prediction layers, unused.
      const int64_t layer = hf_layer_of(t.name);
      if (layer >= files.config.num_layers) {
        ++num_past_last_layer;
        continue;
      }
      if (layer >= 0 && add_hf_fused_experts(t, layer, files.weights)) continue;
      std::optional<std::string> canonical = hf_tensor_to_canonical(t.name);
      if (!canonical) {
        if (num_ignored++ == 0) first_ignored = t.name;
        continue;
      }
      files.weights.add(*canonical, t);
    }
  }
  check(expected_file.empty(), "{}: tensor '{}' is listed in model.safetensors.index.json but missing from {}", path,
        expected_file.empty() ? "" : expected_file.begin()->first,
        expected_file.empty() ? "" : expected_file.begin()->second);
  if (num_past_last_layer > 0) {
    log_info("{}: not loading {} tensor(s) of layers past num_hidden_layers {} (multi-token prediction)", path,
             num_past_last_layer, files.config.num_layers);
  }
  if (num_ignored > 0) log_warn("{}: ignoring {} unknown tensor(s), e.g. '{}'", path, num_ignored, first_ignored);
  check_weights_match_config(files.weights, files.config);

  // The ids that end generation: generation_config.json's, else config.json's; else (empty) the
  // tokenizer's eos, which runtime::ModelFileSet adds.
  const std::vector<int32_t> config_eos_ids = parse_hf_eos_token_ids(config, config_path.string());
  const fs::path generation_path = dir / "generation_config.json";
  if (fs::exists(generation_path)) {
    files.generation = parse_hf_generation_config(ju::parse_file(generation_path.string()), generation_path.string());
  }
  if (files.generation.eos_token_ids.empty()) files.generation.eos_token_ids = config_eos_ids;
  for (int32_t id : files.generation.eos_token_ids) {
    check(id >= 0 && int64_t(id) < files.config.vocab_size, "{}: eos token id {} is outside the vocabulary", path, id);
  }
  return files;
}

}  // namespace

namespace {

ModelFiles open_files(const std::string& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  check(!ec && fs::exists(status), "{}: no such file or directory", path);
  if (fs::is_directory(status)) return open_hf_directory(path);
  check(fs::is_regular_file(status), "{}: not a regular file or directory", path);
  if (starts_with_gguf_magic(path)) {
    auto gguf = std::make_shared<const format::GgufFile>(format::GgufFile::open(path));
    ModelFiles files = model_from_gguf(*gguf, path);
    files.gguf = std::move(gguf);
    return files;
  }
  if (fs::path(path).extension() == ".safetensors") {
    fail("{}: a lone .safetensors file; pass the model directory (with config.json and tokenizer.json) instead", path);
  }
  fail("{}: not a GGUF file (bad magic) and not a Hugging Face model directory", path);
}

void apply_overrides(ModelFiles& files, const ConfigOverrides& overrides) {
  if (!overrides.rope_scaling) return;
  check(!files.weights.has("rope_freqs.weight"),
        "--rope-scaling: {} carries its own RoPE frequency factors (rope_freqs.weight); it cannot be rescaled", files.path);
  RopeScaling scaling = *overrides.rope_scaling;
  if (scaling.enabled() && scaling.original_max_position == 0) scaling.original_max_position = files.config.max_position;
  files.config.rope_scaling = scaling;
  check_model_config(files.config, files.path + " with --rope-scaling");
}

}  // namespace

ModelFiles open_model(const std::string& path, const ConfigOverrides& overrides) {
  ModelFiles files = open_files(path);
  apply_overrides(files, overrides);
  return files;
}

}  // namespace llmesh::model
