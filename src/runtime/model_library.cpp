#include "runtime/model_library.h"

#include <algorithm>
#include <regex>

#include "core/error.h"
#include "kv/kv_pool.h"
#include "model/model.h"
#include "runtime/model_file_set.h"
#include "runtime/model_summary.h"

namespace llmesh::runtime {

namespace fs = std::filesystem;

namespace {

// A split GGUF's later shards ("-00002-of-00003.gguf") load through the first.
bool is_later_shard(const std::string& name) {
  static const std::regex shard(R"(-(\d{5})-of-\d{5}\.gguf$)");
  std::smatch m;
  return std::regex_search(name, m, shard) && m[1] != "00001";
}

bool is_hf_dir(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_regular_file(dir / "config.json", ec)) return false;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".safetensors") return true;
  return false;
}

int64_t hf_dir_bytes(const fs::path& dir) {
  int64_t total = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".safetensors") total += int64_t(entry.file_size(ec));
  return total;
}

// The models directly in `dir`: (path, format).
void collect(const fs::path& dir, int depth, std::vector<std::pair<fs::path, std::string>>& out) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, fs::directory_options::skip_permission_denied, ec)) {
    const fs::path& p = entry.path();
    const std::string name = p.filename().string();
    if (name.starts_with(".")) continue;
    if (entry.is_regular_file(ec) && p.extension() == ".gguf" && !is_later_shard(name)) {
      out.emplace_back(p, "gguf");
    } else if (entry.is_directory(ec)) {
      if (is_hf_dir(p)) {
        out.emplace_back(p, "safetensors");
      } else if (depth == 0) {
        collect(p, depth + 1, out);
      }
    }
  }
}

LibraryModel describe(const fs::path& path, const std::string& format, int64_t size_bytes) {
  LibraryModel m;
  m.path = path.string();
  m.format = format;
  m.size_bytes = size_bytes;
  m.name = format == "gguf" ? path.stem().string() : path.filename().string();
  try {
    const ModelFileSet opened = ModelFileSet::open(m.path);
    const model::ModelConfig& c = opened.files.config;
    const ModelSummary summary = summarize(opened.files);
    m.architecture = c.arch;
    m.quantization = summary.quantization;
    m.num_parameters = summary.num_parameters;
    m.num_active_parameters = summary.num_active_parameters;
    m.context_tokens = c.max_context();
    m.kv_bytes_per_token = model::kv_cache_shape(c, 16, 0, kv::kDefaultKvDtype).bytes_per_token();
  } catch (const std::exception& e) {
    m.error = e.what();
  }
  return m;
}

}  // namespace

std::vector<LibraryModel> ModelLibrary::scan() {
  std::error_code ec;
  check(fs::is_directory(dir_, ec), "--models-dir {}: not a readable directory", dir_);
  std::vector<std::pair<fs::path, std::string>> found;
  collect(dir_, 0, found);
  std::lock_guard lock(mu_);
  std::map<std::string, Cached> seen;
  std::vector<LibraryModel> models;
  for (const auto& [path, format] : found) {
    const fs::path stamp = format == "gguf" ? path : path / "config.json";
    const auto mtime = fs::last_write_time(stamp, ec);
    const int64_t size = format == "gguf" ? int64_t(fs::file_size(path, ec)) : hf_dir_bytes(path);
    auto it = cache_.find(path.string());
    if (it == cache_.end() || it->second.mtime != mtime || it->second.size_bytes != size) {
      it = cache_.insert_or_assign(path.string(), Cached{mtime, size, describe(path, format, size)}).first;
    }
    models.push_back(it->second.model);
    seen.insert(*it);
  }
  cache_ = std::move(seen);  // forget files that went away
  std::sort(models.begin(), models.end(), [](const LibraryModel& a, const LibraryModel& b) { return a.name < b.name; });
  return models;
}

}  // namespace llmesh::runtime
