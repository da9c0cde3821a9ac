// Scalar dequantization of the 256-value K-quant super-blocks, IQ4_NL / IQ4_XS and MXFP4,
// and the Q8_K activation quantizer. Layouts: core/quant_blocks.h.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "kernels/ref/ref_ops.h"

namespace llmesh::kernels::ref {

namespace {

// Q3_K: 16 6-bit scales in 12 bytes: low 4 bits are the nibbles of bytes 0-7 (low nibbles
// for scales 0-7, high for 8-15), high 2 bits are bit pair i/4 of byte 8 + i%4.
int scale_q3_k(const uint8_t* scales, int i) {
  const int low = i < 8 ? scales[i] & 0x0f : scales[i - 8] >> 4;
  const int high = (scales[8 + i % 4] >> (2 * (i / 4))) & 3;
  return (low | (high << 4)) - 32;
}

void dequantize_q2_k(const BlockQ2_K* blocks, float* dst, int64_t num_blocks) {
  for (int64_t b = 0; b < num_blocks; ++b) {
    const BlockQ2_K& blk = blocks[b];
    const float d = f16_to_f32(blk.d), dmin = f16_to_f32(blk.dmin);
    float* out = dst + b * kQKK;
    for (int i = 0; i < kQKK; ++i) {
      const int half = i / 128, k = (i % 128) / 32, l = i % 32;
      const int q = (blk.qs[32 * half + l] >> (2 * k)) & 3;
      const uint8_t sc = blk.scales[i / 16];
      out[i] = d * float(sc & 0x0f) * float(q) - dmin * float(sc >> 4);
    }
  }
}

void dequantize_q3_k(const BlockQ3_K* blocks, float* dst, int64_t num_blocks) {
  for (int64_t b = 0; b < num_blocks; ++b) {
    const BlockQ3_K& blk = blocks[b];
    const float d = f16_to_f32(blk.d);
    float* out = dst + b * kQKK;
    for (int i = 0; i < kQKK; ++i) {
      const int half = i / 128, k = (i % 128) / 32, l = i % 32;
      const int low = (blk.qs[32 * half + l] >> (2 * k)) & 3;
      const bool high = (blk.hmask[l] >> (4 * half + k)) & 1;
      out[i] = d * float(scale_q3_k(blk.scales, i / 16)) * float(low - (high ? 0 : 4));
    }
  }
}

void dequantize_q4_k(const BlockQ4_K* blocks, float* dst, int64_t num_blocks) {
  for (int64_t b = 0; b < num_blocks; ++b) {
    const BlockQ4_K& blk = blocks[b];
    const float d = f16_to_f32(blk.d), dmin = f16_to_f32(blk.dmin);
    float* out = dst + b * kQKK;
    for (int i = 0; i < kQKK; ++i) {
      const int chunk = i / 64, upper = (i % 64) / 32, l = i % 32;
      const uint8_t byte = blk.qs[32 * chunk + l];
      const int q = upper ? byte >> 4 : byte & 0x0f;
      int scale, min;
      k4_scale_min(blk.scales, i / 32, &scale, &min);
      out[i] = d * float(scale) * float(q) - dmin * float(min);
    }
  }
}

void dequantize_q5_k(const BlockQ5_K* blocks, float* dst, int64_t num_blocks) {
  for (int64_t b = 0; b < num_blocks; ++b) {
    const BlockQ5_K& blk = blocks[b];
    const float d = f16_to_f32(blk.d), dmin = f16_to_f32(blk.dmin);
    float* out = dst + b * kQKK;
    for (int i = 0; i < kQKK; ++i) {
      const int chunk = i / 64, upper = (i % 64) / 32, l = i % 32;
      const uint8_t byte = blk.qs[32 * chunk + l];
      const int high = (blk.qh[l] >> (2 * chunk + upper)) & 1;
      const int q = (upper ? byte >> 4 : byte & 0x0f) | (high << 4);
      int scale, min;
      k4_scale_min(blk.scales, i / 32, &scale, &min);
      out[i] = d * float(scale) * float(q) - dmin * float(min);
    }
  }
}

void dequantize_q6_k(const BlockQ6_K* blocks, float* dst, int64_t num_blocks) {
  for (int64_t b = 0; b < num_blocks; ++b) {
    const BlockQ6_K& blk = blocks[b];
    const float d = f16_to_f32(blk.d);
    float* out = dst + b * kQKK;
    // Each 128-value half uses 64 bytes of ql and 32 of qh: value 32k + l (k = 0..3, l < 32)
    // takes nibble k/2 of ql[l + 32 (k % 2)] and bit pair k of qh[l].
    for (int i = 0; i < kQKK; ++i) {
      const int half = i / 128, k = (i % 128) / 32, l = i % 32;
      const uint8_t low_byte = blk.ql[64 * half + l + 32 * (k % 2)];
      const int low = k < 2 ? low_byte & 0x0f : low_byte >> 4;
      const int high = (blk.qh[32 * half + l] >> (2 * k)) & 3;
      out[i] = d * float(blk.scales[i / 16]) * float((low | (high << 4)) - 32);
    }
  }
}

void dequantize_q8_k(const BlockQ8_K* blocks, float* dst, int64_t num_blocks) {
  for (int64_t b = 0; b < num_blocks; ++b)
    for (int i = 0; i < kQKK; ++i) dst[b * kQKK + i] = blocks[b].d * float(blocks[b].qs[i]);
}

// 16 bytes of nibbles (value j low, j + 16 high) through a 16-entry table, times d.
void dequantize_nibbles(const uint8_t* qs, const int8_t* table, float d, float* out) {
  for (int j = 0; j < kQK / 2; ++j) {
    out[j] = d * float(table[qs[j] & 0x0f]);
    out[j + kQK / 2] = d * float(table[qs[j] >> 4]);
  }
}

void dequantize_iq4_nl(const BlockIQ4_NL* blocks, float* dst, int64_t num_blocks) {
  for (int64_t b = 0; b < num_blocks; ++b)
    dequantize_nibbles(blocks[b].qs, kIq4nlValues, f16_to_f32(blocks[b].d), dst + b * kQK);
}

void dequantize_iq4_xs(const BlockIQ4_XS* blocks, float* dst, int64_t num_blocks) {
  for (int64_t b = 0; b < num_blocks; ++b) {
    const BlockIQ4_XS& blk = blocks[b];
    const float d = f16_to_f32(blk.d);
    for (int s = 0; s < kQKK / kQK; ++s) {
      const int low = (blk.scales_l[s / 2] >> (4 * (s % 2))) & 0x0f;
      const int high = (blk.scales_h >> (2 * s)) & 3;
      dequantize_nibbles(blk.qs + 16 * s, kIq4nlValues, d * float((low | (high << 4)) - 32),
                         dst + b * kQKK + s * kQK);
    }
  }
}

void dequantize_mxfp4(const BlockMXFP4* blocks, float* dst, int64_t num_blocks) {
  for (int64_t b = 0; b < num_blocks; ++b) {
    // The table holds twice the E2M1 values, so the scale is 2^(e - 128); e = 0xFF is NaN.
    const float d = blocks[b].e == 0xff ? NAN : std::ldexp(1.0f, int(blocks[b].e) - 128);
    dequantize_nibbles(blocks[b].qs, kMxfp4Values, d, dst + b * kQK);
  }
}

}  // namespace

bool dequantize_row_super_blocks(DType dtype, const void* src, float* dst, int64_t n) {
  const int64_t num_blocks = n / dtype_block_size(dtype);
  switch (dtype) {
    case DType::Q2_K: dequantize_q2_k(static_cast<const BlockQ2_K*>(src), dst, num_blocks); return true;
    case DType::Q3_K: dequantize_q3_k(static_cast<const BlockQ3_K*>(src), dst, num_blocks); return true;
    case DType::Q4_K: dequantize_q4_k(static_cast<const BlockQ4_K*>(src), dst, num_blocks); return true;
    case DType::Q5_K: dequantize_q5_k(static_cast<const BlockQ5_K*>(src), dst, num_blocks); return true;
    case DType::Q6_K: dequantize_q6_k(static_cast<const BlockQ6_K*>(src), dst, num_blocks); return true;
    case DType::Q8_K: dequantize_q8_k(static_cast<const BlockQ8_K*>(src), dst, num_blocks); return true;
    case DType::IQ4_NL: dequantize_iq4_nl(static_cast<const BlockIQ4_NL*>(src), dst, num_blocks); return true;
    case DType::IQ4_XS: dequantize_iq4_xs(static_cast<const BlockIQ4_XS*>(src), dst, num_blocks); return true;
    case DType::MXFP4: dequantize_mxfp4(static_cast<const BlockMXFP4*>(src), dst, num_blocks); return true;
    default: return false;
  }
}

void quantize_row_q8_k(const float* src, BlockQ8_K* dst, int64_t n) {
  check(n % kQKK == 0, "quantize_row_q8_k: {} values is not a multiple of {}", n, kQKK);
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const float* x = src + b * kQKK;
    BlockQ8_K& blk = dst[b];
    // The signed extreme maps to -128 so the other side keeps the full [-127, 127].
    float amax = 0.0f, extreme = 0.0f;
    for (int j = 0; j < kQKK; ++j) {
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        extreme = x[j];
      }
    }
    std::memset(&blk, 0, sizeof(blk));
    if (amax == 0.0f) continue;
    const float inv_d = -128.0f / extreme;
    blk.d = 1.0f / inv_d;
    for (int j = 0; j < kQKK; ++j) blk.qs[j] = int8_t(std::min(127, int(std::lround(x[j] * inv_d))));
    for (int g = 0; g < kQKK / 16; ++g) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += blk.qs[16 * g + j];
      blk.bsums[g] = int16_t(sum);
    }
  }
}

}  // namespace llmesh::kernels::ref
