// Element types of weights and activations.
//
// Quantized types follow GGUF's block layouts exactly, so GGUF tensors are
// used in place (memory-mapped, never repacked); the block structs and where
// each layout comes from are in core/quant_blocks.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/quant_blocks.h"

namespace llmesh {

// New types go at the end: the numeric values appear in no file, but keep them stable anyway.
enum class DType : uint8_t {
  F32, F16, BF16, Q8_0, Q4_0,
  Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K, IQ4_NL, IQ4_XS, MXFP4,
};
inline constexpr DType kAllDTypes[] = {
    DType::F32,  DType::F16,  DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_1,   DType::Q5_0,   DType::Q5_1,
    DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q8_K, DType::IQ4_NL, DType::IQ4_XS,
    DType::MXFP4,
};

std::string_view dtype_name(DType dtype);        // "f32", "bf16", "q8_0", ...
bool parse_dtype(std::string_view name, DType* out);

// Number of elements per quantization block (1 for plain float types).
int dtype_block_size(DType dtype);
// Bytes used by one block (or one element for plain float types).
size_t dtype_block_bytes(DType dtype);
// Bytes of a row of `num_elements` values; num_elements must be a multiple of the block size.
size_t dtype_row_bytes(DType dtype, int64_t num_elements);

// Scalar conversions (round-to-nearest-even, like the hardware instructions).
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
inline float bf16_to_f32(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint16_t f32_to_bf16(float f);

}  // namespace llmesh
