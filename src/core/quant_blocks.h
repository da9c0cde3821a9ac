// GGUF quantization block layouts, byte for byte as ggml stores them.
//
// Source: the public ggml block definitions (ggml-common.h in ggml / llama.cpp,
// as described by the GGUF spec's type table); field order and sizes are the
// format, so static_asserts pin them. Values are read as documented per block:
// "value j" is the j-th of the block's values in row order. f16 fields are raw
// IEEE half bits. Dequantization lives in kernels/ref/ (quantize_ref.cpp for
// the 32-value types, dequantize_kquants_ref.cpp for the rest).
#pragma once

#include <cstdint>

namespace llmesh {

inline constexpr int kQK = 32;   // values per block of the *_0 / *_1 / IQ4_NL / MXFP4 types
inline constexpr int kQKK = 256; // values per K-quant / IQ4_XS super-block
inline constexpr int kQ8_0BlockSize = kQK;
inline constexpr int kQ4_0BlockSize = kQK;

// x = d * q
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK];
};
static_assert(sizeof(BlockQ8_0) == 34);

// byte j: value j (low nibble), value j+16 (high); x = d * (q - 8)
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_0) == 18);

// nibbles as Q4_0; x = d * q + m
struct BlockQ4_1 {
  uint16_t d, m;
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_1) == 20);

// low 4 bits as Q4_0, bit j of the little-endian u32 qh is bit 4 of value j; x = d * (q - 16)
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_0) == 22);

// bits as Q5_0; x = d * q + m
struct BlockQ5_1 {
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_1) == 24);

// 16 sub-blocks of 16: scales[i] = scale (low 4 bits) | min (high 4 bits) of sub-block i;
// 2-bit quants, byte l of each 32-byte half h holds, at bit 2k, value 128h + 32k + l
// (l < 32, sub-block (128h + 32k + l) / 16); x = d * sc * q - dmin * m
struct BlockQ2_K {
  uint8_t scales[kQKK / 16];
  uint8_t qs[kQKK / 4];
  uint16_t d, dmin;
};
static_assert(sizeof(BlockQ2_K) == 84);

// 2 low bits as Q2_K in qs; hmask bit k of byte l is the high bit of value 32k + l (set: +0, clear: -4);
// 16 signed 6-bit scales (minus 32) packed in 12 bytes; x = d * (sc - 32) * q, q in [-4, 3]
struct BlockQ3_K {
  uint8_t hmask[kQKK / 8];
  uint8_t qs[kQKK / 4];
  uint8_t scales[12];
  uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == 110);

// 8 sub-blocks of 32, 6-bit scale and min each packed in 12 bytes; 64-value chunks c: byte l of
// qs[32c..] holds value 64c + l (low nibble) and 64c + 32 + l (high); x = d * sc * q - dmin * m
struct BlockQ4_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qs[kQKK / 2];
};
static_assert(sizeof(BlockQ4_K) == 144);

// Q4_K / Q5_K: scale and min of sub-block j (6 bits each). Pairs 0-3 are the low 6 bits of
// bytes 0-3 (scale) and 4-7 (min); pairs 4-7 take their low 4 bits from the nibbles of bytes
// 8-11 and their high 2 bits from the top bits of bytes 0-3 (scale) and 4-7 (min).
inline void k4_scale_min(const uint8_t* scales, int j, int* scale, int* min) {
  if (j < 4) {
    *scale = scales[j] & 63;
    *min = scales[j + 4] & 63;
  } else {
    *scale = (scales[j + 4] & 0x0f) | ((scales[j - 4] >> 6) << 4);
    *min = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
  }
}

// as Q4_K plus a fifth bit: qh bit 2c (low nibble) / 2c + 1 (high) of byte l, chunk c
struct BlockQ5_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qh[kQKK / 8];
  uint8_t qs[kQKK / 2];
};
static_assert(sizeof(BlockQ5_K) == 176);

// 16 sub-blocks of 16 with int8 scales; 6-bit quants (low 4 in ql, high 2 in qh) minus 32;
// x = d * sc * q
struct BlockQ6_K {
  uint8_t ql[kQKK / 2];
  uint8_t qh[kQKK / 4];
  int8_t scales[kQKK / 16];
  uint16_t d;
};
static_assert(sizeof(BlockQ6_K) == 210);

// The activation type of K-quant dot products: f32 scale, int8 quants, and the sums
// of each 16 quants; x = d * q
struct BlockQ8_K {
  float d;
  int8_t qs[kQKK];
  int16_t bsums[kQKK / 16];
};
static_assert(sizeof(BlockQ8_K) == 292);

// nibbles as Q4_0 index a fixed non-uniform table (kIq4nlValues); x = d * table[q]
struct BlockIQ4_NL {
  uint16_t d;
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockIQ4_NL) == 18);

// 8 sub-blocks of 32, each as IQ4_NL with a 6-bit scale (low 4 bits in scales_l nibble i,
// high 2 in scales_h bits 2i); x = d * (ls - 32) * table[q]
struct BlockIQ4_XS {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[kQKK / 64];
  uint8_t qs[kQKK / 2];
};
static_assert(sizeof(BlockIQ4_XS) == 136);

// OCP microscaling FP4: e8m0 shared exponent e and 32 E2M1 codes (nibbles as Q4_0);
// x = 2^(e - 127) * fp4(q); e = 0xFF is NaN
struct BlockMXFP4 {
  uint8_t e;
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockMXFP4) == 17);

// IQ4_NL / IQ4_XS code book.
inline constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};
// E2M1 values times two (so they are integers); the scale is then 2^(e - 128).
inline constexpr int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

}  // namespace llmesh
