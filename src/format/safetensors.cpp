#include "format/safetensors.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/mapped_file.h"
#include "format/json_util.h"

namespace llmesh::format {

namespace {

// The safetensors format caps its header at 100 MB.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
constexpr uint64_t kMaxTensorElements = uint64_t(1) << 60;
constexpr size_t kMaxDims = 8;

bool dtype_from_safetensors(const std::string& name, DType* out) {
  if (name == "F32")
    *out = DType::F32;
  else if (name == "F16")
    *out = DType::F16;
  else if (name == "BF16")
    *out = DType::BF16;
  else
    return false;
  return true;
}

uint64_t json_u64(const json_util::Json& v, const std::string& what, const std::string& source) {
  check(v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0),
        "{}: {} must be a non-negative integer", source, what);
  return v.get<uint64_t>();
}

}  // namespace

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile file;
  file.path_ = path;
  file.mapping_ = std::make_shared<const MappedFile>(path);
  file.parse_all(file.mapping_->data(), file.mapping_->size());
  return file;
}

SafetensorsFile SafetensorsFile::parse(const uint8_t* bytes, size_t size, const std::string& source) {
  SafetensorsFile file;
  file.path_ = source;
  file.parse_all(bytes, size);
  return file;
}

void SafetensorsFile::parse_all(const uint8_t* bytes, size_t size) {
  const std::string& source = path_;
  check(size >= 8, "{}: not a safetensors file (only {} bytes)", source, size);
  uint64_t header_bytes;
  std::memcpy(&header_bytes, bytes, 8);
  check(header_bytes <= kMaxHeaderBytes, "{}: not a safetensors file (header length {} is absurd)", source,
        header_bytes);
  check(header_bytes <= size - 8, "{}: truncated safetensors file: header of {} bytes but only {} follow", source,
        header_bytes, size - 8);
  const std::string_view header_text(reinterpret_cast<const char*>(bytes + 8), size_t(header_bytes));
  check(!header_text.empty() && header_text.front() == '{', "{}: not a safetensors file (header is not a JSON object)",
        source);
  const json_util::Json header = json_util::parse_text(header_text, source + " (safetensors header)");
  check(header.is_object(), "{}: safetensors header is not a JSON object", source);

  const uint8_t* data = bytes + 8 + header_bytes;
  const uint64_t data_size = size - 8 - header_bytes;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      check(entry.is_object(), "{}: __metadata__ is not an object", source);
      for (const auto& [key, value] : entry.items()) {
        if (value.is_string()) metadata_[key] = value.get<std::string>();
      }
      continue;
    }
    check(entry.is_object(), "{}: tensor '{}': entry is not an object", source, name);
    const std::string dtype_name_in_file = json_util::get_string(entry, "dtype", source + " tensor '" + name + "'");
    Tensor t;
    t.name = name;
    check(dtype_from_safetensors(dtype_name_in_file, &t.dtype),
          "{}: tensor '{}' has unsupported dtype {} (llmesh reads F32, F16 and BF16 safetensors)", source, name,
          dtype_name_in_file);

    auto shape_it = entry.find("shape");
    check(shape_it != entry.end() && shape_it->is_array() && shape_it->size() <= kMaxDims,
          "{}: tensor '{}': 'shape' must be an array of at most {} sizes", source, name, kMaxDims);
    uint64_t num_elements = 1;
    for (const auto& dim_json : *shape_it) {
      const uint64_t dim = json_u64(dim_json, "tensor '" + name + "' shape", source);
      check(dim <= kMaxTensorElements && (dim == 0 || num_elements <= kMaxTensorElements / dim),
            "{}: tensor '{}' has an absurd shape", source, name);
      num_elements *= dim;
      t.shape.push_back(int64_t(dim));
    }

    auto offsets_it = entry.find("data_offsets");
    check(offsets_it != entry.end() && offsets_it->is_array() && offsets_it->size() == 2,
          "{}: tensor '{}': 'data_offsets' must be [begin, end]", source, name);
    const uint64_t begin = json_u64((*offsets_it)[0], "tensor '" + name + "' data_offsets", source);
    const uint64_t end = json_u64((*offsets_it)[1], "tensor '" + name + "' data_offsets", source);
    check(begin <= end, "{}: tensor '{}': data_offsets [{}, {}) are reversed", source, name, begin, end);
    check(end <= data_size, "{}: truncated safetensors file: tensor '{}' needs data bytes [{}, {}) but there are {}",
          source, name, begin, end, data_size);
    const uint64_t expected_bytes = num_elements * dtype_block_bytes(t.dtype);
    check(end - begin == expected_bytes, "{}: tensor '{}' {} {} should take {} bytes but data_offsets give {}", source,
          name, dtype_name_in_file, t.shape_string(), expected_bytes, end - begin);
    t.data = data + begin;
    auto [it, inserted] = index_.emplace(name, 0);
    check(inserted, "{}: duplicate tensor '{}'", source, name);
    tensors_.push_back(std::move(t));
  }
  std::sort(tensors_.begin(), tensors_.end(),
            [](const Tensor& a, const Tensor& b) { return a.data != b.data ? a.data < b.data : a.name < b.name; });
  for (size_t i = 0; i < tensors_.size(); ++i) index_[tensors_[i].name] = i;
}

const Tensor* SafetensorsFile::find_tensor(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace llmesh::format
