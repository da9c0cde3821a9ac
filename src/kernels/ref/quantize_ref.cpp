// GGUF block (de)quantization, scalar.
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "kernels/ref/ref_ops.h"

namespace llmesh::kernels::ref {

namespace {

// Q5_0 / Q5_1: nibbles as Q4_0 plus bit j of the little-endian u32 qh as bit 4 of value j.
void unpack_5bit(const uint8_t* qs, const uint8_t* qh_bytes, int* q) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  for (int j = 0; j < kQK / 2; ++j) {
    q[j] = (qs[j] & 0x0f) | int(((qh >> j) & 1) << 4);
    q[j + kQK / 2] = (qs[j] >> 4) | int(((qh >> (j + 16)) & 1) << 4);
  }
}

}  // namespace

void dequantize_row(DType dtype, const void* src, float* dst, int64_t n) {
  check(n % dtype_block_size(dtype) == 0, "dequantize_row: {} values is not a multiple of the {} block size {}",
        n, dtype_name(dtype), dtype_block_size(dtype));
  switch (dtype) {
    case DType::F32:
      std::memcpy(dst, src, size_t(n) * sizeof(float));
      return;
    case DType::F16: {
      const auto* h = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_f32(h[i]);
      return;
    }
    case DType::BF16: {
      const auto* h = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(h[i]);
      return;
    }
    case DType::Q8_0: {
      const auto* blocks = static_cast<const BlockQ8_0*>(src);
      for (int64_t b = 0; b < n / kQ8_0BlockSize; ++b) {
        const float d = f16_to_f32(blocks[b].d);
        for (int j = 0; j < kQ8_0BlockSize; ++j) dst[b * kQ8_0BlockSize + j] = d * float(blocks[b].qs[j]);
      }
      return;
    }
    case DType::Q4_0: {
      const auto* blocks = static_cast<const BlockQ4_0*>(src);
      constexpr int kHalf = kQ4_0BlockSize / 2;
      for (int64_t b = 0; b < n / kQ4_0BlockSize; ++b) {
        const float d = f16_to_f32(blocks[b].d);
        float* out = dst + b * kQ4_0BlockSize;
        for (int j = 0; j < kHalf; ++j) {
          out[j] = d * float(int(blocks[b].qs[j] & 0x0f) - 8);
          out[j + kHalf] = d * float(int(blocks[b].qs[j] >> 4) - 8);
        }
      }
      return;
    }
    case DType::Q4_1: {
      const auto* blocks = static_cast<const BlockQ4_1*>(src);
      for (int64_t b = 0; b < n / kQK; ++b) {
        const float d = f16_to_f32(blocks[b].d), m = f16_to_f32(blocks[b].m);
        float* out = dst + b * kQK;
        for (int j = 0; j < kQK / 2; ++j) {
          out[j] = d * float(blocks[b].qs[j] & 0x0f) + m;
          out[j + kQK / 2] = d * float(blocks[b].qs[j] >> 4) + m;
        }
      }
      return;
    }
    case DType::Q5_0:
      for (int64_t b = 0; b < n / kQK; ++b) {
        const auto& blk = static_cast<const BlockQ5_0*>(src)[b];
        int q[kQK];
        unpack_5bit(blk.qs, blk.qh, q);
        const float d = f16_to_f32(blk.d);
        for (int j = 0; j < kQK; ++j) dst[b * kQK + j] = d * float(q[j] - 16);
      }
      return;
    case DType::Q5_1:
      for (int64_t b = 0; b < n / kQK; ++b) {
        const auto& blk = static_cast<const BlockQ5_1*>(src)[b];
        int q[kQK];
        unpack_5bit(blk.qs, blk.qh, q);
        const float d = f16_to_f32(blk.d), m = f16_to_f32(blk.m);
        for (int j = 0; j < kQK; ++j) dst[b * kQK + j] = d * float(q[j]) + m;
      }
      return;
    default:
      if (dequantize_row_super_blocks(dtype, src, dst, n)) return;
  }
  fail("dequantize_row: unknown dtype {}", int(dtype));
}

void quantize_row_q8_0(const float* src, BlockQ8_0* dst, int64_t n) {
  check(n % kQ8_0BlockSize == 0, "quantize_row_q8_0: {} values is not a multiple of {}", n, kQ8_0BlockSize);
  for (int64_t b = 0; b < n / kQ8_0BlockSize; ++b) {
    const float* x = src + b * kQ8_0BlockSize;
    float amax = 0.0f;
    for (int j = 0; j < kQ8_0BlockSize; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float inv_d = d != 0.0f ? 1.0f / d : 0.0f;
    dst[b].d = f32_to_f16(d);
    for (int j = 0; j < kQ8_0BlockSize; ++j) dst[b].qs[j] = int8_t(std::lround(x[j] * inv_d));
  }
}

void quantize_row_q4_0(const float* src, BlockQ4_0* dst, int64_t n) {
  check(n % kQ4_0BlockSize == 0, "quantize_row_q4_0: {} values is not a multiple of {}", n, kQ4_0BlockSize);
  constexpr int kHalf = kQ4_0BlockSize / 2;
  for (int64_t b = 0; b < n / kQ4_0BlockSize; ++b) {
    const float* x = src + b * kQ4_0BlockSize;
    // The signed extreme maps to q = 0 (value -8 * d), so the full range [-8, 7] is used on its side.
    float amax = 0.0f, extreme = 0.0f;
    for (int j = 0; j < kQ4_0BlockSize; ++j) {
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        extreme = x[j];
      }
    }
    const float d = extreme / -8.0f;
    const float inv_d = d != 0.0f ? 1.0f / d : 0.0f;
    dst[b].d = f32_to_f16(d);
    for (int j = 0; j < kHalf; ++j) {
      const int lo = std::min(15, int(x[j] * inv_d + 8.5f));
      const int hi = std::min(15, int(x[j + kHalf] * inv_d + 8.5f));
      dst[b].qs[j] = uint8_t(lo | (hi << 4));
    }
  }
}

}  // namespace llmesh::kernels::ref
