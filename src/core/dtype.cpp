#include "core/dtype.h"

#include <cmath>

#include "core/error.h"

namespace llmesh {

namespace {

struct DTypeInfo {
  std::string_view name;
  int block_size;
  size_t block_bytes;
};

DTypeInfo info(DType dtype) {
  switch (dtype) {
    case DType::F32: return {"f32", 1, 4};
    case DType::F16: return {"f16", 1, 2};
    case DType::BF16: return {"bf16", 1, 2};
    case DType::Q8_0: return {"q8_0", kQK, sizeof(BlockQ8_0)};
    case DType::Q4_0: return {"q4_0", kQK, sizeof(BlockQ4_0)};
    case DType::Q4_1: return {"q4_1", kQK, sizeof(BlockQ4_1)};
    case DType::Q5_0: return {"q5_0", kQK, sizeof(BlockQ5_0)};
    case DType::Q5_1: return {"q5_1", kQK, sizeof(BlockQ5_1)};
    case DType::Q2_K: return {"q2_k", kQKK, sizeof(BlockQ2_K)};
    case DType::Q3_K: return {"q3_k", kQKK, sizeof(BlockQ3_K)};
    case DType::Q4_K: return {"q4_k", kQKK, sizeof(BlockQ4_K)};
    case DType::Q5_K: return {"q5_k", kQKK, sizeof(BlockQ5_K)};
    case DType::Q6_K: return {"q6_k", kQKK, sizeof(BlockQ6_K)};
    case DType::Q8_K: return {"q8_k", kQKK, sizeof(BlockQ8_K)};
    case DType::IQ4_NL: return {"iq4_nl", kQK, sizeof(BlockIQ4_NL)};
    case DType::IQ4_XS: return {"iq4_xs", kQKK, sizeof(BlockIQ4_XS)};
    case DType::MXFP4: return {"mxfp4", kQK, sizeof(BlockMXFP4)};
  }
  return {"?", 1, 0};
}

}  // namespace

std::string_view dtype_name(DType dtype) { return info(dtype).name; }

bool parse_dtype(std::string_view name, DType* out) {
  for (DType d : kAllDTypes) {
    if (dtype_name(d) == name) {
      *out = d;
      return true;
    }
  }
  return false;
}

int dtype_block_size(DType dtype) { return info(dtype).block_size; }

size_t dtype_block_bytes(DType dtype) { return info(dtype).block_bytes; }

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
