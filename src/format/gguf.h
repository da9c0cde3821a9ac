// GGUF (v2 and v3) reader: metadata key/values and tensor views over the file.
//
// Layout (little-endian): "GGUF", u32 version, u64 tensor_count, u64 kv_count,
// kv_count x (string key, u32 value type, value), tensor_count x (string name,
// u32 n_dims, u64 dims[n_dims] innermost-first, u32 ggml type, u64 offset),
// padding to general.alignment (default 32), then the tensor data; each offset
// is relative to the data start and aligned. Strings are u64 length + bytes.
//
// Every length and count is checked against the bytes that remain, so a
// corrupt or truncated file gives an Error naming the file and the problem,
// never a crash or a huge allocation. Tensor shapes are reversed into
// llmesh's outermost-first order ({out, in} for a linear weight).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tensor.h"

namespace llmesh {
class MappedFile;
}  // namespace llmesh

namespace llmesh::format {

enum class GgufValueType : uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};
const char* gguf_value_type_name(GgufValueType type);

// ggml tensor type ids (ggml.h's enum ggml_type) of the types llmesh can use in place.
inline constexpr uint32_t kGgmlTypeF32 = 0, kGgmlTypeF16 = 1, kGgmlTypeQ4_0 = 2, kGgmlTypeQ4_1 = 3,
                          kGgmlTypeQ5_0 = 6, kGgmlTypeQ5_1 = 7, kGgmlTypeQ8_0 = 8, kGgmlTypeQ2_K = 10,
                          kGgmlTypeQ3_K = 11, kGgmlTypeQ4_K = 12, kGgmlTypeQ5_K = 13, kGgmlTypeQ6_K = 14,
                          kGgmlTypeQ8_K = 15, kGgmlTypeIQ4_NL = 20, kGgmlTypeIQ4_XS = 23, kGgmlTypeBF16 = 30,
                          kGgmlTypeMXFP4 = 39;
std::string ggml_type_name(uint32_t ggml_type);  // "Q4_K", "type 99", ...
bool dtype_from_ggml(uint32_t ggml_type, DType* out);
uint32_t ggml_type_of(DType dtype);

// Checks that every block scale of the quantized tensors (f16 d / dmin / super-block scales,
// Q8_K's f32 d, MXFP4's e8m0 exponent) is finite; throws an Error naming `source` and the
// first bad tensor and block found. It touches every page of the tensors, so it splits the
// work over up to `num_threads` threads (GgufFile::open and parse run it).
void check_block_scales(const std::vector<Tensor>& tensors, const std::string& source, int num_threads);

struct GgufValue {
  GgufValueType type = GgufValueType::U8;
  // Scalars: integers and bools in `integer` (u64 stored bit-for-bit), floats in `real`.
  uint64_t integer = 0;
  double real = 0;
  std::string string;
  // Arrays: element type and count; string elements are decoded, numeric ones
  // stay in the file at `array_offset` and are decoded on request.
  GgufValueType array_type = GgufValueType::U8;
  uint64_t array_size = 0;
  size_t array_offset = 0;
  std::vector<std::string> strings;
};

class GgufFile {
 public:
  // Maps and parses a file.
  static GgufFile open(const std::string& path);
  // Parses an in-memory image (tests, fuzzers); `bytes` must outlive the result
  // and its tensor views. `source` names it in errors.
  static GgufFile parse(const uint8_t* bytes, size_t size, const std::string& source);

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  size_t alignment() const { return alignment_; }
  size_t data_offset() const { return data_offset_; }
  // Null for parse()d images.
  const std::shared_ptr<const MappedFile>& mapping() const { return mapping_; }

  // Metadata in file order.
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return metadata_; }
  const GgufValue* find(const std::string& key) const;
  bool has(const std::string& key) const { return find(key) != nullptr; }

  // Typed access. get_* throw Error when the key is missing or has another type;
  // find_* return nullopt when it is missing and throw when it has another type.
  // Integers: any integer type that fits int64. Floats: f32/f64 (or an integer).
  std::string get_string(const std::string& key) const;
  std::optional<std::string> find_string(const std::string& key) const;
  int64_t get_int(const std::string& key) const;
  std::optional<int64_t> find_int(const std::string& key) const;
  double get_float(const std::string& key) const;
  std::optional<double> find_float(const std::string& key) const;
  bool get_bool(const std::string& key) const;
  std::optional<bool> find_bool(const std::string& key) const;
  const std::vector<std::string>& get_string_array(const std::string& key) const;
  std::vector<int64_t> get_int_array(const std::string& key) const;
  std::vector<double> get_float_array(const std::string& key) const;

  // Tensors in file order, with outermost-first shapes and data pointers into the file.
  const std::vector<Tensor>& tensors() const { return tensors_; }
  const std::vector<uint32_t>& tensor_ggml_types() const { return ggml_types_; }
  const Tensor* find_tensor(const std::string& name) const;

  // A one-line rendering of a metadata value for `llmesh inspect` (arrays abbreviated).
  std::string value_to_string(const GgufValue& value) const;

 private:
  GgufFile() = default;
  void parse_all();
  const GgufValue& require(const std::string& key) const;
  int64_t integer_of(const std::string& key, const GgufValue& v) const;

  std::string path_;
  std::shared_ptr<const MappedFile> mapping_;
  const uint8_t* bytes_ = nullptr;
  size_t size_ = 0;
  uint32_t version_ = 0;
  size_t alignment_ = 32;
  size_t data_offset_ = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::unordered_map<std::string, size_t> metadata_index_;
  std::vector<Tensor> tensors_;
  std::vector<uint32_t> ggml_types_;
  std::unordered_map<std::string, size_t> tensor_index_;
};

}  // namespace llmesh::format
