// safetensors reader: u64 header length N, N bytes of JSON
// {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}},
// then the data; offsets are relative to the data start.
//
// Only F32, F16 and BF16 tensors are accepted (anything else is an Error naming
// the tensor and the dtype). Every tensor's byte range must lie inside the file
// and match product(shape) x element size.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tensor.h"

namespace llmesh {
class MappedFile;
}  // namespace llmesh

namespace llmesh::format {

class SafetensorsFile {
 public:
  static SafetensorsFile open(const std::string& path);
  // Parses an in-memory image (tests, fuzzers); `bytes` must outlive the result.
  static SafetensorsFile parse(const uint8_t* bytes, size_t size, const std::string& source);

  const std::string& path() const { return path_; }
  const std::shared_ptr<const MappedFile>& mapping() const { return mapping_; }
  // Tensors sorted by their offset in the file (names as stored, e.g. "model.norm.weight").
  const std::vector<Tensor>& tensors() const { return tensors_; }
  const Tensor* find_tensor(const std::string& name) const;
  // "__metadata__" string entries (e.g. {"format": "pt"}).
  const std::unordered_map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  SafetensorsFile() = default;
  void parse_all(const uint8_t* bytes, size_t size);

  std::string path_;
  std::shared_ptr<const MappedFile> mapping_;
  std::vector<Tensor> tensors_;
  std::unordered_map<std::string, size_t> index_;
  std::unordered_map<std::string, std::string> metadata_;
};

}  // namespace llmesh::format
