#include "format/gguf.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <thread>

#include "core/error.h"
#include "core/mapped_file.h"

namespace llmesh::format {

const char* gguf_value_type_name(GgufValueType type) {
  switch (type) {
    case GgufValueType::U8:
      return "u8";
    case GgufValueType::I8:
      return "i8";
    case GgufValueType::U16:
      return "u16";
    case GgufValueType::I16:
      return "i16";
    case GgufValueType::U32:
      return "u32";
    case GgufValueType::I32:
      return "i32";
    case GgufValueType::F32:
      return "f32";
    case GgufValueType::Bool:
      return "bool";
    case GgufValueType::String:
      return "string";
    case GgufValueType::Array:
      return "array";
    case GgufValueType::U64:
      return "u64";
    case GgufValueType::I64:
      return "i64";
    case GgufValueType::F64:
      return "f64";
  }
  return "unknown";
}

std::string ggml_type_name(uint32_t ggml_type) {
  // ggml's type ids (ggml.h); ids that were removed or never used are left empty.
  static const char* const kNames[] = {
      "F32",    "F16",   "Q4_0",  "Q4_1",   "",      "",      "Q5_0",    "Q5_1",   "Q8_0",    "Q8_1",
      "Q2_K",   "Q3_K",  "Q4_K",  "Q5_K",   "Q6_K",  "Q8_K",  "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S",
      "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS", "I8",    "I16",   "I32",     "I64",    "F64",     "IQ1_M",
      "BF16",   "",      "",      "",       "TQ1_0", "TQ2_0", "",        "",       "",        "MXFP4",
  };
  if (ggml_type < std::size(kNames) && kNames[ggml_type][0] != '\0') return kNames[ggml_type];
  return fmt::format("type {}", ggml_type);
}

namespace {

struct GgmlDType {
  uint32_t ggml_type;
  DType dtype;
};
constexpr GgmlDType kGgmlDTypes[] = {
    {kGgmlTypeF32, DType::F32},       {kGgmlTypeF16, DType::F16},       {kGgmlTypeBF16, DType::BF16},
    {kGgmlTypeQ8_0, DType::Q8_0},     {kGgmlTypeQ4_0, DType::Q4_0},     {kGgmlTypeQ4_1, DType::Q4_1},
    {kGgmlTypeQ5_0, DType::Q5_0},     {kGgmlTypeQ5_1, DType::Q5_1},     {kGgmlTypeQ2_K, DType::Q2_K},
    {kGgmlTypeQ3_K, DType::Q3_K},     {kGgmlTypeQ4_K, DType::Q4_K},     {kGgmlTypeQ5_K, DType::Q5_K},
    {kGgmlTypeQ6_K, DType::Q6_K},     {kGgmlTypeQ8_K, DType::Q8_K},     {kGgmlTypeIQ4_NL, DType::IQ4_NL},
    {kGgmlTypeIQ4_XS, DType::IQ4_XS}, {kGgmlTypeMXFP4, DType::MXFP4},
};

// "F32, F16, ..." for the unsupported-type message.
std::string supported_ggml_type_names() {
  std::string out;
  for (const GgmlDType& t : kGgmlDTypes) out += (out.empty() ? "" : ", ") + ggml_type_name(t.ggml_type);
  return out;
}

}  // namespace

bool dtype_from_ggml(uint32_t ggml_type, DType* out) {
  for (const GgmlDType& t : kGgmlDTypes) {
    if (t.ggml_type == ggml_type) {
      *out = t.dtype;
      return true;
    }
  }
  return false;
}

uint32_t ggml_type_of(DType dtype) {
  for (const GgmlDType& t : kGgmlDTypes) {
    if (t.dtype == dtype) return t.ggml_type;
  }
  fail("ggml_type_of: unknown dtype {}", int(dtype));
}

namespace {

// Size of one scalar of a fixed-size value type; 0 for strings and arrays.
size_t scalar_bytes(GgufValueType type) {
  switch (type) {
    case GgufValueType::U8:
    case GgufValueType::I8:
    case GgufValueType::Bool:
      return 1;
    case GgufValueType::U16:
    case GgufValueType::I16:
      return 2;
    case GgufValueType::U32:
    case GgufValueType::I32:
    case GgufValueType::F32:
      return 4;
    case GgufValueType::U64:
    case GgufValueType::I64:
    case GgufValueType::F64:
      return 8;
    default:
      return 0;
  }
}

bool is_known_type(uint32_t type) { return type <= uint32_t(GgufValueType::F64); }
bool is_integer_type(GgufValueType t) {
  return scalar_bytes(t) != 0 && t != GgufValueType::F32 && t != GgufValueType::F64;
}
bool is_float_type(GgufValueType t) { return t == GgufValueType::F32 || t == GgufValueType::F64; }

// Reads little-endian scalars from bytes[0, size) with every read bounds-checked.
class ByteReader {
 public:
  ByteReader(const uint8_t* bytes, size_t size, const std::string& source)
      : bytes_(bytes), size_(size), source_(source) {}

  size_t position() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }

  void need(size_t n, const char* what) const {
    check(n <= remaining(), "{}: truncated or corrupt GGUF file: {} needs {} bytes at offset {}, only {} remain",
          source_, what, n, pos_, remaining());
  }
  void skip(size_t n, const char* what) {
    need(n, what);
    pos_ += n;
  }
  template <typename T>
  T read(const char* what) {
    need(sizeof(T), what);
    T value;
    std::memcpy(&value, bytes_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }
  std::string read_string(const char* what) {
    const uint64_t length = read<uint64_t>(what);
    check(length <= remaining(), "{}: truncated or corrupt GGUF file: {} of {} bytes at offset {}, only {} remain",
          source_, what, length, pos_, remaining());
    std::string s(reinterpret_cast<const char*>(bytes_ + pos_), size_t(length));
    pos_ += size_t(length);
    return s;
  }
  // The scalar at `offset` (which the caller has bounds-checked) widened to u64/double.
  uint64_t integer_at(size_t offset, GgufValueType type) const {
    const uint8_t* p = bytes_ + offset;
    switch (type) {
      case GgufValueType::U8:
      case GgufValueType::Bool:
        return *p;
      case GgufValueType::I8:
        return uint64_t(int64_t(int8_t(*p)));
      case GgufValueType::U16:
        return load<uint16_t>(p);
      case GgufValueType::I16:
        return uint64_t(int64_t(load<int16_t>(p)));
      case GgufValueType::U32:
        return load<uint32_t>(p);
      case GgufValueType::I32:
        return uint64_t(int64_t(load<int32_t>(p)));
      case GgufValueType::U64:
        return load<uint64_t>(p);
      case GgufValueType::I64:
        return load<uint64_t>(p);
      default:
        return 0;
    }
  }
  double real_at(size_t offset, GgufValueType type) const {
    return type == GgufValueType::F32 ? double(load<float>(bytes_ + offset)) : load<double>(bytes_ + offset);
  }

 private:
  template <typename T>
  static T load(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  }
  const uint8_t* bytes_;
  size_t size_;
  size_t pos_ = 0;
  const std::string& source_;
};

constexpr int kMaxArrayNesting = 8;
constexpr uint64_t kMaxTensorElements = uint64_t(1) << 60;
constexpr size_t kMaxAlignment = size_t(1) << 30;

// Reads one value of `type` at the reader's position into `value`.
void read_value(ByteReader& in, GgufValueType type, GgufValue& value, int depth, const std::string& source,
                const std::string& key) {
  value.type = type;
  if (size_t n = scalar_bytes(type)) {
    const size_t at = in.position();
    in.skip(n, "a metadata value");
    if (is_float_type(type)) {
      value.real = in.real_at(at, type);
    } else {
      value.integer = in.integer_at(at, type);
    }
    return;
  }
  if (type == GgufValueType::String) {
    value.string = in.read_string("a string value");
    return;
  }
  // Array: u32 element type, u64 count, elements.
  check(depth < kMaxArrayNesting, "{}: metadata '{}' nests arrays more than {} deep", source, key, kMaxArrayNesting);
  const uint32_t elem_type = in.read<uint32_t>("an array element type");
  check(is_known_type(elem_type), "{}: metadata '{}' has an array of unknown value type {}", source, key, elem_type);
  value.array_type = GgufValueType(elem_type);
  value.array_size = in.read<uint64_t>("an array length");
  const uint64_t count = value.array_size;
  if (size_t n = scalar_bytes(value.array_type)) {
    check(count <= in.remaining() / n,
          "{}: truncated or corrupt GGUF file: metadata '{}': array of {} x {} does not fit in the {} bytes left",
          source, key, count, gguf_value_type_name(value.array_type), in.remaining());
    value.array_offset = in.position();
    in.skip(size_t(count) * n, "array elements");
  } else if (value.array_type == GgufValueType::String) {
    // Each string takes at least its 8-byte length.
    check(count <= in.remaining() / 8,
          "{}: truncated or corrupt GGUF file: metadata '{}': array of {} strings does not fit in the {} bytes left",
          source, key, count, in.remaining());
    value.strings.reserve(size_t(count));
    for (uint64_t i = 0; i < count; ++i) value.strings.push_back(in.read_string("an array string"));
  } else {
    // Nested arrays: validated and skipped (no key llmesh reads uses them).
    check(count <= in.remaining() / 12,
          "{}: truncated or corrupt GGUF file: metadata '{}': array of {} arrays does not fit in the {} bytes left",
          source, key, count, in.remaining());
    for (uint64_t i = 0; i < count; ++i) {
      GgufValue inner;
      read_value(in, GgufValueType::Array, inner, depth + 1, source, key);
    }
  }
}

}  // namespace

GgufFile GgufFile::open(const std::string& path) {
  GgufFile file;
  file.path_ = path;
  auto mapping = std::make_shared<const MappedFile>(path);
  file.bytes_ = mapping->data();
  file.size_ = mapping->size();
  file.mapping_ = std::move(mapping);
  file.parse_all();
  return file;
}

GgufFile GgufFile::parse(const uint8_t* bytes, size_t size, const std::string& source) {
  GgufFile file;
  file.path_ = source;
  file.bytes_ = bytes;
  file.size_ = size;
  file.parse_all();
  return file;
}

void GgufFile::parse_all() {
  const std::string& source = path_;
  ByteReader in(bytes_, size_, source);
  check(size_ >= 4 && std::memcmp(bytes_, "GGUF", 4) == 0, "{}: not a GGUF file (bad magic)", source);
  in.skip(4, "the magic");
  version_ = in.read<uint32_t>("the version");
  check(version_ == 2 || version_ == 3,
        "{}: unsupported GGUF version {} (llmesh reads versions 2 and 3; a huge number may mean a big-endian file)",
        source, version_);
  const uint64_t tensor_count = in.read<uint64_t>("the tensor count");
  const uint64_t kv_count = in.read<uint64_t>("the metadata count");
  // A key/value takes at least 8 (key length) + 4 (type) + 1 bytes; a tensor info 8 + 4 + 8 + 4 + 8.
  check(kv_count <= in.remaining() / 13,
        "{}: truncated or corrupt GGUF file: {} metadata entries cannot fit in {} bytes", source, kv_count, size_);
  check(tensor_count <= in.remaining() / 32, "{}: truncated or corrupt GGUF file: {} tensors cannot fit in {} bytes",
        source, tensor_count, size_);

  metadata_.reserve(size_t(kv_count));
  for (uint64_t i = 0; i < kv_count; ++i) {
    std::string key = in.read_string("a metadata key");
    const uint32_t type = in.read<uint32_t>("a metadata value type");
    check(is_known_type(type), "{}: metadata '{}' has unknown value type {}", source, key, type);
    GgufValue value;
    read_value(in, GgufValueType(type), value, 0, source, key);
    auto [it, inserted] = metadata_index_.emplace(key, metadata_.size());
    check(inserted, "{}: duplicate metadata key '{}'", source, key);
    metadata_.emplace_back(std::move(key), std::move(value));
  }

  if (const GgufValue* a = find("general.alignment")) {
    check(is_integer_type(a->type) && a->type != GgufValueType::Bool, "{}: general.alignment must be an integer",
          source);
    const int64_t alignment = integer_of("general.alignment", *a);
    check(alignment > 0 && alignment <= int64_t(kMaxAlignment) && (alignment & (alignment - 1)) == 0,
          "{}: general.alignment {} is not a power of two up to {}", source, alignment, kMaxAlignment);
    alignment_ = size_t(alignment);
  }

  struct PendingTensor {
    uint64_t offset;
  };
  std::vector<PendingTensor> offsets;
  tensors_.reserve(size_t(tensor_count));
  offsets.reserve(size_t(tensor_count));
  for (uint64_t i = 0; i < tensor_count; ++i) {
    Tensor t;
    t.name = in.read_string("a tensor name");
    const uint32_t num_dims = in.read<uint32_t>("a tensor's dimension count");
    check(num_dims >= 1 && num_dims <= 4, "{}: tensor '{}' has {} dimensions (GGUF allows 1 to 4)", source, t.name,
          num_dims);
    t.shape.assign(num_dims, 0);
    uint64_t num_elements = 1;
    for (uint32_t d = 0; d < num_dims; ++d) {
      const uint64_t dim = in.read<uint64_t>("a tensor dimension");
      check(dim >= 1 && dim <= kMaxTensorElements && num_elements <= kMaxTensorElements / dim,
            "{}: tensor '{}' has an absurd dimension {}", source, t.name, dim);
      num_elements *= dim;
      t.shape[num_dims - 1 - d] = int64_t(dim);  // innermost-first -> outermost-first
    }
    const uint32_t ggml_type = in.read<uint32_t>("a tensor type");
    check(dtype_from_ggml(ggml_type, &t.dtype),
          "{}: tensor '{}' has unsupported type {} (ggml type id {}); llmesh reads {}", source, t.name,
          ggml_type_name(ggml_type), ggml_type, supported_ggml_type_names());
    check(t.cols() % dtype_block_size(t.dtype) == 0,
          "{}: tensor '{}' {} has rows of {} values, not a multiple of the {} block size {}", source, t.name,
          t.shape_string(), t.cols(), dtype_name(t.dtype), dtype_block_size(t.dtype));
    const uint64_t offset = in.read<uint64_t>("a tensor offset");
    check(offset % alignment_ == 0, "{}: tensor '{}' offset {} is not aligned to {}", source, t.name, offset,
          alignment_);
    auto [it, inserted] = tensor_index_.emplace(t.name, tensors_.size());
    check(inserted, "{}: duplicate tensor '{}'", source, t.name);
    tensors_.push_back(std::move(t));
    ggml_types_.push_back(ggml_type);
    offsets.push_back({offset});
  }

  const size_t header_end = in.position();
  data_offset_ = (header_end + alignment_ - 1) / alignment_ * alignment_;
  if (tensors_.empty()) return;
  check(data_offset_ <= size_, "{}: truncated GGUF file: the tensor data would start at {} but the file has {} bytes",
        source, data_offset_, size_);
  const uint64_t data_size = size_ - data_offset_;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    Tensor& t = tensors_[i];
    const uint64_t num_bytes = t.num_bytes();
    const uint64_t offset = offsets[i].offset;
    check(offset <= data_size && num_bytes <= data_size - offset,
          "{}: truncated GGUF file: tensor '{}' {} {} needs bytes [{}, {}) of the data section, which has {}", source,
          t.name, dtype_name(t.dtype), t.shape_string(), offset, offset + num_bytes, data_size);
    // Kernels read blocks through their structs (f16 / f32 fields): a file whose general.alignment
    // leaves a tensor at a misaligned position is refused rather than read misaligned.
    const size_t need = t.dtype == DType::F32 || t.dtype == DType::Q8_K ? 4 : t.dtype == DType::MXFP4 ? 1 : 2;
    check((data_offset_ + offset) % need == 0,
          "{}: tensor '{}' ({}) starts at file offset {}, not a multiple of {} (general.alignment {})", source,
          t.name, dtype_name(t.dtype), data_offset_ + offset, need, alignment_);
    t.data = bytes_ + data_offset_ + offset;
  }
  check_block_scales(tensors_, source, int(std::min(8u, std::max(1u, std::thread::hardware_concurrency()))));
}

const GgufValue* GgufFile::find(const std::string& key) const {
  auto it = metadata_index_.find(key);
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].second;
}

const GgufValue& GgufFile::require(const std::string& key) const {
  const GgufValue* v = find(key);
  check(v != nullptr, "{}: missing required metadata key '{}'", path_, key);
  return *v;
}

int64_t GgufFile::integer_of(const std::string& key, const GgufValue& v) const {
  if (v.type == GgufValueType::U64) {
    check(v.integer <= uint64_t(std::numeric_limits<int64_t>::max()), "{}: metadata '{}' = {} is out of range", path_,
          key, v.integer);
  }
  return int64_t(v.integer);
}

std::string GgufFile::get_string(const std::string& key) const {
  const GgufValue& v = require(key);
  check(v.type == GgufValueType::String, "{}: metadata '{}' should be a string, not {}", path_, key,
        gguf_value_type_name(v.type));
  return v.string;
}

std::optional<std::string> GgufFile::find_string(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return get_string(key);
}

int64_t GgufFile::get_int(const std::string& key) const {
  const GgufValue& v = require(key);
  check(is_integer_type(v.type) && v.type != GgufValueType::Bool, "{}: metadata '{}' should be an integer, not {}",
        path_, key, gguf_value_type_name(v.type));
  return integer_of(key, v);
}

std::optional<int64_t> GgufFile::find_int(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return get_int(key);
}

double GgufFile::get_float(const std::string& key) const {
  const GgufValue& v = require(key);
  if (is_float_type(v.type)) return v.real;
  check(is_integer_type(v.type) && v.type != GgufValueType::Bool, "{}: metadata '{}' should be a number, not {}", path_,
        key, gguf_value_type_name(v.type));
  return double(integer_of(key, v));
}

std::optional<double> GgufFile::find_float(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return get_float(key);
}

bool GgufFile::get_bool(const std::string& key) const {
  const GgufValue& v = require(key);
  check(v.type == GgufValueType::Bool, "{}: metadata '{}' should be a bool, not {}", path_, key,
        gguf_value_type_name(v.type));
  return v.integer != 0;
}

std::optional<bool> GgufFile::find_bool(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return get_bool(key);
}

const std::vector<std::string>& GgufFile::get_string_array(const std::string& key) const {
  const GgufValue& v = require(key);
  check(v.type == GgufValueType::Array && v.array_type == GgufValueType::String,
        "{}: metadata '{}' should be an array of strings", path_, key);
  return v.strings;
}

std::vector<int64_t> GgufFile::get_int_array(const std::string& key) const {
  const GgufValue& v = require(key);
  check(v.type == GgufValueType::Array && is_integer_type(v.array_type),
        "{}: metadata '{}' should be an array of integers", path_, key);
  ByteReader reader(bytes_, size_, path_);
  const size_t n = scalar_bytes(v.array_type);
  std::vector<int64_t> out(size_t(v.array_size));
  for (size_t i = 0; i < out.size(); ++i) {
    const uint64_t x = reader.integer_at(v.array_offset + i * n, v.array_type);
    check(v.array_type != GgufValueType::U64 || x <= uint64_t(std::numeric_limits<int64_t>::max()),
          "{}: metadata '{}'[{}] = {} is out of range", path_, key, i, x);
    out[i] = int64_t(x);
  }
  return out;
}

std::vector<double> GgufFile::get_float_array(const std::string& key) const {
  const GgufValue& v = require(key);
  check(v.type == GgufValueType::Array && is_float_type(v.array_type), "{}: metadata '{}' should be an array of floats",
        path_, key);
  ByteReader reader(bytes_, size_, path_);
  const size_t n = scalar_bytes(v.array_type);
  std::vector<double> out(size_t(v.array_size));
  for (size_t i = 0; i < out.size(); ++i) out[i] = reader.real_at(v.array_offset + i * n, v.array_type);
  return out;
}

const Tensor* GgufFile::find_tensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::string GgufFile::value_to_string(const GgufValue& v) const {
  auto abbreviate = [](const std::string& s) {
    std::string out = s.size() > 60 ? s.substr(0, 57) + "..." : s;
    for (char& c : out) {
      if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    }
    return out;
  };
  if (v.type == GgufValueType::String) return "\"" + abbreviate(v.string) + "\"";
  if (v.type == GgufValueType::Bool) return v.integer ? "true" : "false";
  if (is_float_type(v.type)) return fmt::format("{}", v.real);
  if (v.type == GgufValueType::I8 || v.type == GgufValueType::I16 || v.type == GgufValueType::I32 ||
      v.type == GgufValueType::I64) {
    return fmt::format("{}", int64_t(v.integer));
  }
  if (v.type != GgufValueType::Array) return fmt::format("{}", v.integer);
  std::string out = fmt::format("[{} x {}]", v.array_size, gguf_value_type_name(v.array_type));
  if (v.array_type == GgufValueType::String && !v.strings.empty()) {
    out += " \"" + abbreviate(v.strings[0]) + "\"" + (v.strings.size() > 1 ? ", ..." : "");
  }
  return out;
}

}  // namespace llmesh::format
