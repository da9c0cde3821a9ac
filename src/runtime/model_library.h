// The model files in a directory (`--models-dir`), for the console's model
// library: each .gguf file (the first shard of a split file) and each Hugging
// Face directory (config.json beside *.safetensors), directly in the
// directory or one level down. Each is opened once (headers only: the
// weights stay unread) and remembered until its size or time changes, so
// listing a library of large files is cheap after the first time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace llmesh::runtime {

struct LibraryModel {
  std::string name;    // file name without .gguf, or the directory's name
  std::string path;
  std::string format;  // gguf | safetensors
  int64_t size_bytes = 0;
  std::string error;   // why it could not be read ("" when it could)
  // When it could:
  std::string architecture, quantization;
  int64_t num_parameters = 0, num_active_parameters = 0;
  int64_t context_tokens = 0;
  int64_t kv_bytes_per_token = 0;  // f16 K/V, the default cache dtype
};

class ModelLibrary {
 public:
  explicit ModelLibrary(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }
  // Sorted by name; Error when the directory cannot be read.
  std::vector<LibraryModel> scan();

 private:
  struct Cached {
    std::filesystem::file_time_type mtime;
    int64_t size_bytes;
    LibraryModel model;
  };
  std::string dir_;
  std::mutex mu_;
  std::map<std::string, Cached> cache_;  // by path
};

}  // namespace llmesh::runtime
