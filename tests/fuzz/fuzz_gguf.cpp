// libFuzzer target: arbitrary bytes as a GGUF file, through the whole GGUF
// path (header, metadata accessors, config, vocabulary, canonical weights,
// shape checks, block-scale checks, and dequantizing each tensor's first row in
// its block type). Bad input must end in llmesh::Error; anything else (a crash,
// a sanitizer report, another exception) is a bug.
#include <cstdint>
#include <cstring>

#include <vector>

#include "core/error.h"
#include "format/gguf.h"
#include "kernels/ref/ref_ops.h"
#include "model/gguf_config.h"
#include "text/gguf_tokenizer.h"

namespace {

// Reads the first and last byte of every view, so ASan sees any view that leaves the input.
uint32_t touch(const llmesh::Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.data);
  const size_t n = t.num_bytes();
  return n == 0 ? 0u : uint32_t(p[0]) + p[n - 1];
}

void exercise_accessors(const llmesh::format::GgufFile& gguf) {
  for (const auto& [key, value] : gguf.metadata()) {
    (void)gguf.value_to_string(value);
    try {
      if (value.type == llmesh::format::GgufValueType::Array) {
        if (value.array_type == llmesh::format::GgufValueType::String) {
          (void)gguf.get_string_array(key);
        } else if (value.array_type == llmesh::format::GgufValueType::F32 ||
                   value.array_type == llmesh::format::GgufValueType::F64) {
          (void)gguf.get_float_array(key);
        } else {
          (void)gguf.get_int_array(key);
        }
      } else {
        (void)gguf.find_int(key);
      }
    } catch (const llmesh::Error&) {
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const llmesh::format::GgufFile gguf = llmesh::format::GgufFile::parse(data, size, "fuzz.gguf");
    exercise_accessors(gguf);
    volatile uint32_t sink = 0;
    std::vector<float> row;
    for (const llmesh::Tensor& t : gguf.tensors()) {
      sink = sink + touch(t);
      if (t.num_bytes() == 0) continue;
      row.resize(size_t(t.cols()));  // the row lies in the input, so cols is bounded by its size
      llmesh::kernels::ref::dequantize_row(t.dtype, t.data, row.data(), t.cols());
      sink = sink + uint32_t(row[0] != row[0]);
    }
    try {
      (void)llmesh::text::tokenizer_from_gguf(gguf);
    } catch (const llmesh::Error&) {
    }
    const llmesh::model::ModelFiles files = llmesh::model::model_from_gguf(gguf, "fuzz.gguf");
    for (const std::string& name : files.weights.names()) sink = sink + touch(files.weights.get(name));
  } catch (const llmesh::Error&) {
  }
  return 0;
}
