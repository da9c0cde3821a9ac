#include "core/dtype.h"

#include <cmath>

#include "core/error.h"

namespace llmesh {

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::Q8_0: return "q8_0";
    case DType::Q4_0: return "q4_0";
  }
  return "?";
}

bool parse_dtype(std::string_view name, DType* out) {
  for (DType d : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0}) {
    if (dtype_name(d) == name) {
      *out = d;
      return true;
    }
  }
  return false;
}

int dtype_block_size(DType dtype) {
  switch (dtype) {
    case DType::Q8_0: return kQ8_0BlockSize;
    case DType::Q4_0: return kQ4_0BlockSize;
    default: return 1;
  }
}

size_t dtype_block_bytes(DType dtype) {
  switch (dtype) {
    case DType::F32: return 4;
    case DType::F16:
    case DType::BF16: return 2;
    case DType::Q8_0: return sizeof(BlockQ8_0);
    case DType::Q4_0: return sizeof(BlockQ4_0);
  }
  return 0;
}

size_t dtype_row_bytes(DType dtype, int64_t num_elements) {
  const int block = dtype_block_size(dtype);
  check(num_elements % block == 0, "a {} row of {} values is not a multiple of the block size {}",
        dtype_name(dtype), num_elements, block);
  return size_t(num_elements / block) * dtype_block_bytes(dtype);
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: value = mant * 2^-24
      float f = std::ldexp(float(mant), -24);
      std::memcpy(&bits, &f, 4);
      bits |= sign;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t f32_to_f16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000;
  const uint32_t abs = x & 0x7fffffff;
  if (abs >= 0x7f800000u) return uint16_t(sign | 0x7c00 | (abs > 0x7f800000u ? 0x200 : 0));  // inf/nan
  if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00);                                     // overflow
  if (abs < 0x38800000u) {  // subnormal or zero in f16: round(|f| * 2^24)
    float a;
    std::memcpy(&a, &abs, 4);
    return uint16_t(sign | uint32_t(std::nearbyint(a * 16777216.0f)));
  }
  // Normal: drop 13 mantissa bits with round-to-nearest-even.
  uint32_t rounded = abs + 0xfff + ((abs >> 13) & 1);
  return uint16_t(sign | ((rounded - (112u << 23)) >> 13));
}

uint16_t f32_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);  // quiet nan
  x += 0x7fff + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

}  // namespace llmesh
