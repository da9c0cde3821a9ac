#include "core/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.h"

namespace llmesh {
namespace {

TEST(DType, F16KnownValues) {
  // Bit patterns from the IEEE 754 binary16 definition.
  EXPECT_EQ(f32_to_f16(0.0f), 0x0000);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);  // largest finite
  EXPECT_EQ(f32_to_f16(1e6f), 0x7c00);      // overflow -> inf
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(f16_to_f32(0x3555), 0.333251953125f);
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(f16_to_f32(0x7c00)));
  EXPECT_TRUE(std::isnan(f16_to_f32(0x7e00)));
}

TEST(DType, F16RoundsToNearestEven) {
  // 1 + 2^-11 is exactly halfway between 1 and the next f16 (1 + 2^-10): ties to even -> 1.
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3*2^-11 is halfway between 1+2^-10 (odd) and 1+2^-9 (even) -> rounds up.
  EXPECT_EQ(f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
}

TEST(DType, F16RoundTripAllFinite) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint16_t bits = uint16_t(h);
    if ((bits & 0x7c00) == 0x7c00) continue;  // inf/nan
    EXPECT_EQ(f32_to_f16(f16_to_f32(bits)), bits) << std::hex << h;
  }
}

TEST(DType, Bf16) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  // 1 + 2^-8 is halfway between bf16 neighbours 1 and 1+2^-7: ties to even -> 1.
  EXPECT_EQ(f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(DType, RowBytes) {
  EXPECT_EQ(dtype_row_bytes(DType::F32, 64), 256u);
  EXPECT_EQ(dtype_row_bytes(DType::BF16, 64), 128u);
  EXPECT_EQ(dtype_row_bytes(DType::Q8_0, 64), 68u);
  EXPECT_EQ(dtype_row_bytes(DType::Q4_0, 64), 36u);
  EXPECT_THROW(dtype_row_bytes(DType::Q4_0, 33), Error);
  DType d;
  EXPECT_TRUE(parse_dtype("q8_0", &d));
  EXPECT_EQ(d, DType::Q8_0);
  EXPECT_FALSE(parse_dtype("q4_k_m", &d));
}

TEST(DType, BlockTypesHaveGgmlGeometryAndNames) {
  struct Case {
    DType dtype;
    const char* name;
    int block;
    size_t bytes;
  };
  const Case cases[] = {
      {DType::Q4_1, "q4_1", 32, 20},   {DType::Q5_0, "q5_0", 32, 22},     {DType::Q5_1, "q5_1", 32, 24},
      {DType::Q2_K, "q2_k", 256, 84},  {DType::Q3_K, "q3_k", 256, 110},   {DType::Q4_K, "q4_k", 256, 144},
      {DType::Q5_K, "q5_k", 256, 176}, {DType::Q6_K, "q6_k", 256, 210},   {DType::Q8_K, "q8_k", 256, 292},
      {DType::IQ4_NL, "iq4_nl", 32, 18}, {DType::IQ4_XS, "iq4_xs", 256, 136}, {DType::MXFP4, "mxfp4", 32, 17},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(dtype_name(c.dtype), c.name);
    EXPECT_EQ(dtype_block_size(c.dtype), c.block) << c.name;
    EXPECT_EQ(dtype_block_bytes(c.dtype), c.bytes) << c.name;
    DType d;
    ASSERT_TRUE(parse_dtype(c.name, &d));
    EXPECT_EQ(d, c.dtype);
    EXPECT_THROW(dtype_row_bytes(c.dtype, c.block / 2), Error) << c.name;
  }
  for (DType d : kAllDTypes) EXPECT_NE(dtype_name(d), "?");
}

}  // namespace
}  // namespace llmesh
