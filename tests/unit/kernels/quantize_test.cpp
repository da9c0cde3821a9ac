// GGUF Q8_0 / Q4_0 block quantization against hand-computed blocks, and the
// dequantization of every dtype.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "kernels/ops.h"
#include "kernel_test_util.h"

namespace llmesh::kernels {
namespace {

// x_j = j - 16 for j = 0..31: amax = 16.
std::vector<float> ramp_block(float offset) {
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[size_t(j)] = float(j) - offset;
  return x;
}

TEST(QuantizeQ8_0, HandComputedBlock) {
  const std::vector<float> x = ramp_block(16.0f);
  BlockQ8_0 block;
  quantize_row_q8_0(x.data(), &block, 32);
  // d = 16/127 = 0.12598...; nearest f16 is 129/1024 = 0x3008.
  EXPECT_EQ(block.d, 0x3008);
  EXPECT_EQ(block.qs[0], -127);  // -16 * 127/16
  EXPECT_EQ(block.qs[8], -64);   // -8 * 127/16 = -63.5, rounded away from zero
  EXPECT_EQ(block.qs[16], 0);
  EXPECT_EQ(block.qs[17], 8);    // 7.9375
  EXPECT_EQ(block.qs[31], 119);  // 15 * 127/16 = 119.0625
  float back[32];
  dequantize_row(DType::Q8_0, &block, back, 32);
  EXPECT_FLOAT_EQ(back[0], -127.0f * 129.0f / 1024.0f);
  EXPECT_FLOAT_EQ(back[31], 119.0f * 129.0f / 1024.0f);
  for (int j = 0; j < 32; ++j) EXPECT_NEAR(back[j], x[size_t(j)], 0.07) << j;  // half a step
}

TEST(QuantizeQ8_0, ZeroBlockStaysZero) {
  const std::vector<float> x(64, 0.0f);
  BlockQ8_0 blocks[2];
  quantize_row_q8_0(x.data(), blocks, 64);
  float back[64];
  dequantize_row(DType::Q8_0, blocks, back, 64);
  for (float v : back) EXPECT_EQ(v, 0.0f);
}

TEST(QuantizeQ4_0, HandComputedBlockNegativeExtreme) {
  const std::vector<float> x = ramp_block(16.0f);  // -16..15: the extreme is -16, so d = -16 / -8 = 2
  BlockQ4_0 block;
  quantize_row_q4_0(x.data(), &block, 32);
  EXPECT_EQ(block.d, 0x4000);  // 2.0 in f16
  // q_j = min(15, int((j - 16) / 2 + 8.5)); byte j = q_j | q_{j+16} << 4.
  EXPECT_EQ(block.qs[0], 0x80);   // q0 = 0, q16 = 8
  EXPECT_EQ(block.qs[1], 0x91);   // q1 = int(1.0) = 1, q17 = int(9.0) = 9
  EXPECT_EQ(block.qs[2], 0x91);   // q2 = int(1.5) = 1, q18 = int(9.5) = 9
  EXPECT_EQ(block.qs[15], 0xf8);  // q15 = 8, q31 = min(15, 16)
  float back[32];
  dequantize_row(DType::Q4_0, &block, back, 32);
  EXPECT_EQ(back[0], -16.0f);  // 2 * (0 - 8)
  EXPECT_EQ(back[3], -12.0f);  // q3 = int(2.0) = 2
  EXPECT_EQ(back[31], 14.0f);  // clamped at q = 15
}

TEST(QuantizeQ4_0, PositiveExtremeIsExact) {
  const std::vector<float> x = ramp_block(10.0f);  // -10..21: the extreme is +21, d = -2.625
  BlockQ4_0 block;
  quantize_row_q4_0(x.data(), &block, 32);
  EXPECT_EQ(f16_to_f32(block.d), -2.625f);
  float back[32];
  dequantize_row(DType::Q4_0, &block, back, 32);
  EXPECT_EQ(back[31], 21.0f);  // q = 0 -> -2.625 * -8
  for (int j = 0; j < 32; ++j) EXPECT_NEAR(back[j], x[size_t(j)], 2.625 / 2 + 1e-4) << j;
}

TEST(Quantize, RoundtripErrorIsSmallOnRandomData) {
  const std::vector<float> x = testing::random_floats(32 * 64, 5);
  std::vector<BlockQ8_0> q8(64);
  std::vector<BlockQ4_0> q4(64);
  std::vector<float> back(x.size());
  quantize_row_q8_0(x.data(), q8.data(), int64_t(x.size()));
  dequantize_row(DType::Q8_0, q8.data(), back.data(), int64_t(x.size()));
  EXPECT_LT(testing::nmse(back.data(), x.data(), x.size()), 1e-4);
  quantize_row_q4_0(x.data(), q4.data(), int64_t(x.size()));
  dequantize_row(DType::Q4_0, q4.data(), back.data(), int64_t(x.size()));
  EXPECT_LT(testing::nmse(back.data(), x.data(), x.size()), 1e-2);
}

TEST(Dequantize, FloatTypes) {
  const float values[3] = {1.5f, -0.25f, 65504.0f};
  const uint16_t f16[3] = {0x3e00, 0xb400, 0x7bff};
  const uint16_t bf16[3] = {0x3fc0, 0xbe80, 0x477f};  // 65504 is not a bf16: 0x477f = 65280
  float out[3];
  dequantize_row(DType::F16, f16, out, 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(out[i], values[i]);
  dequantize_row(DType::BF16, bf16, out, 3);
  EXPECT_EQ(out[0], 1.5f);
  EXPECT_EQ(out[1], -0.25f);
  EXPECT_EQ(out[2], 65280.0f);
  dequantize_row(DType::F32, values, out, 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(out[i], values[i]);
}

TEST(QuantizeQ8_K, RoundTripsWithBlockSums) {
  const std::vector<float> x = testing::random_floats(512, 7);
  BlockQ8_K blocks[2];
  quantize_row_q8_k(x.data(), blocks, 512);
  float back[512];
  dequantize_row(DType::Q8_K, blocks, back, 512);
  for (int b = 0; b < 2; ++b) {
    float amax = 0;
    for (int j = 0; j < 256; ++j) amax = std::max(amax, std::fabs(x[size_t(256 * b + j)]));
    EXPECT_NEAR(std::fabs(blocks[b].d), amax / 128, 1e-7f);
    // within one step: the positive extreme may clamp at 127
    for (int j = 0; j < 256; ++j)
      EXPECT_NEAR(back[256 * b + j], x[size_t(256 * b + j)], std::fabs(blocks[b].d) * 1.01f);
    for (int g = 0; g < 16; ++g) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += blocks[b].qs[16 * g + j];
      EXPECT_EQ(blocks[b].bsums[g], sum);
    }
  }
  const std::vector<float> zeros(256, 0.0f);
  quantize_row_q8_k(zeros.data(), blocks, 256);
  dequantize_row(DType::Q8_K, blocks, back, 256);
  for (int j = 0; j < 256; ++j) EXPECT_EQ(back[j], 0.0f);
}

// Hand-built blocks whose values are known from the format alone.
TEST(Dequantize, HandBuiltBlocksOfTheNewTypes) {
  float out[256];
  {  // Q4_1: d = 0.5, m = -1: x = 0.5 q - 1
    BlockQ4_1 b{f32_to_f16(0.5f), f32_to_f16(-1.0f), {}};
    for (int j = 0; j < 16; ++j) b.qs[j] = uint8_t(j | ((15 - j) << 4));
    dequantize_row(DType::Q4_1, &b, out, 32);
    EXPECT_EQ(out[0], -1.0f);
    EXPECT_EQ(out[3], 0.5f);
    EXPECT_EQ(out[16], 6.5f);
  }
  {  // Q5_0: value 17 has its fifth bit set: q = 1 | 16 = 17 -> d (17 - 16) = d
    BlockQ5_0 b{f32_to_f16(2.0f), {0, 0, 2, 0}, {}};
    b.qs[1] = 0x10;
    dequantize_row(DType::Q5_0, &b, out, 32);
    EXPECT_EQ(out[17], 2.0f);
    EXPECT_EQ(out[1], -32.0f);
  }
  {  // Q6_K: every 6-bit quant 33 (-> +1), scale i = i + 1, d = 1: x_i = scale of sub-block i / 16
    BlockQ6_K b{};
    for (uint8_t& v : b.ql) v = 0x11;
    for (uint8_t& v : b.qh) v = 0xaa;  // high bits 2 -> 32 + 1 = 33
    for (int i = 0; i < 16; ++i) b.scales[i] = int8_t(i + 1);
    b.d = f32_to_f16(1.0f);
    dequantize_row(DType::Q6_K, &b, out, 256);
    for (int i = 0; i < 256; ++i) EXPECT_EQ(out[i], float(i / 16 + 1)) << i;
  }
  {  // MXFP4: e = 128 -> scale 2^1; code 7 is 6.0, code 9 is -0.5
    BlockMXFP4 b{128, {}};
    b.qs[0] = 0x97;
    dequantize_row(DType::MXFP4, &b, out, 32);
    EXPECT_EQ(out[0], 12.0f);
    EXPECT_EQ(out[16], -1.0f);
    EXPECT_EQ(out[1], 0.0f);
  }
  {  // IQ4_XS: sub-block 5 has ls = 33 (dl = d), code 15 is 113
    BlockIQ4_XS b{};
    b.d = f32_to_f16(0.25f);
    b.scales_l[2] = uint8_t(1 << 4);     // low nibble of sub-block 5 = 1
    b.scales_h = uint16_t(2 << 10);      // high bits of sub-block 5 = 2 -> ls = 33
    b.qs[16 * 5] = 0x0f;
    dequantize_row(DType::IQ4_XS, &b, out, 256);
    EXPECT_EQ(out[32 * 5], 0.25f * 113);
    EXPECT_EQ(out[32 * 5 + 16], 0.25f * -127);
  }
}

TEST(Quantize, RejectsPartialBlocks) {
  float x[40] = {};
  BlockQ8_0 q8[2];
  BlockQ4_0 q4[2];
  EXPECT_THROW(quantize_row_q8_0(x, q8, 40), Error);
  EXPECT_THROW(quantize_row_q4_0(x, q4, 40), Error);
  EXPECT_THROW(dequantize_row(DType::Q8_0, q8, x, 40), Error);
}

}  // namespace
}  // namespace llmesh::kernels
