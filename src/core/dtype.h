// Element types of weights and activations.
//
// Quantized types follow GGUF's block layouts exactly, so GGUF tensors are
// used in place (memory-mapped, never repacked):
//   Q8_0: blocks of 32 values = f16 scale d + 32 x int8 q;       x = d * q
//   Q4_0: blocks of 32 values = f16 scale d + 16 bytes of nibbles;
//         byte j holds value j (low nibble) and value j+16 (high); x = d * (q - 8)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace llmesh {

enum class DType : uint8_t { F32, F16, BF16, Q8_0, Q4_0 };

inline constexpr int kQ8_0BlockSize = 32;
inline constexpr int kQ4_0BlockSize = 32;

struct BlockQ8_0 {
  uint16_t d;  // f16 scale
  int8_t qs[kQ8_0BlockSize];
};
static_assert(sizeof(BlockQ8_0) == 34);

struct BlockQ4_0 {
  uint16_t d;  // f16 scale
  uint8_t qs[kQ4_0BlockSize / 2];
};
static_assert(sizeof(BlockQ4_0) == 18);

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
