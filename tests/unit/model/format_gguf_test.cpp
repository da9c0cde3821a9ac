// GGUF reader: metadata, tensors, config/vocab derivation (model and text layers), canonical names, and
// every error path (truncation at many offsets, corrupt counts, bad types).
#include <gtest/gtest.h>

#include <random>

#include "core/error.h"
#include "format/gguf.h"
#include "format_writers.h"
#include "model/gguf_config.h"
#include "model/model_files.h"
#include "text/gguf_tokenizer.h"

namespace llmesh {

using format::check_block_scales;
using format::dtype_from_ggml;
using format::ggml_type_of;
using format::GgufFile;
using model::check_weights_match_config;
using model::model_from_gguf;
using model::ModelConfig;
using model::ModelFiles;
using model::open_model;
using model::read_gguf_config;
using model::RopeStyle;
using model::WeightStore;
using text::BpeVocab;
using text::tokenizer_from_gguf;
using text::TokenizerFiles;

namespace {

using test::GgufWriter;
using test::TinySpec;

GgufFile parse(const std::vector<uint8_t>& bytes) { return GgufFile::parse(bytes.data(), bytes.size(), "test.gguf"); }

using test::error_of;

float first_f32(const Tensor& t) {
  float v;
  std::memcpy(&v, t.data, 4);
  return v;
}

TEST(FormatGguf, ParsesMetadataOfEveryType) {
  GgufWriter w;
  w.kv_string("s", "hello");
  w.kv_u32("u32", 4000000000u);
  w.kv_i32("i32", -7);
  w.kv_u64("u64", 1ull << 40);
  w.kv_f32("f32", 0.25f);
  w.kv_bool("yes", true);
  w.kv_strings("strs", {"x", "", "yz"});
  w.kv_i32s("ints", {3, -1, 2});
  const auto bytes = w.build();
  const GgufFile f = parse(bytes);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.metadata().size(), 9u);  // + general.alignment
  EXPECT_EQ(f.metadata()[1].first, "s");
  EXPECT_EQ(f.get_string("s"), "hello");
  EXPECT_EQ(f.get_int("u32"), 4000000000ll);
  EXPECT_EQ(f.get_int("i32"), -7);
  EXPECT_EQ(f.get_int("u64"), 1ll << 40);
  EXPECT_DOUBLE_EQ(f.get_float("f32"), 0.25);
  EXPECT_DOUBLE_EQ(f.get_float("i32"), -7.0);  // integers read as floats too
  EXPECT_TRUE(f.get_bool("yes"));
  EXPECT_EQ(f.get_string_array("strs"), (std::vector<std::string>{"x", "", "yz"}));
  EXPECT_EQ(f.get_int_array("ints"), (std::vector<int64_t>{3, -1, 2}));
  EXPECT_EQ(f.find_int("missing"), std::nullopt);
  EXPECT_TRUE(f.tensors().empty());

  // Missing keys and wrong types are errors naming the key.
  EXPECT_NE(error_of([&] { f.get_int("missing"); }).find("missing required metadata key 'missing'"), std::string::npos);
  EXPECT_NE(error_of([&] { f.get_int("s"); }).find("'s' should be an integer"), std::string::npos);
  EXPECT_NE(error_of([&] { f.get_string("u32"); }).find("'u32' should be a string"), std::string::npos);
  EXPECT_NE(error_of([&] { f.get_bool("i32"); }).find("should be a bool"), std::string::npos);
  EXPECT_NE(error_of([&] { f.get_string_array("ints"); }).find("array of strings"), std::string::npos);
  EXPECT_NE(error_of([&] { f.find_float("s"); }).find("should be a number"), std::string::npos);
}

TEST(FormatGguf, AcceptsVersion2AndRejectsOthers) {
  for (uint32_t version : {2u, 3u}) {
    GgufWriter w;
    w.version = version;
    w.kv_u32("x", 1);
    EXPECT_EQ(parse(w.build()).version(), version);
  }
  for (uint32_t version : {0u, 1u, 4u, 0x03000000u}) {
    GgufWriter w;
    w.version = version;
    const auto bytes = w.build();
    EXPECT_NE(error_of([&] { parse(bytes); }).find("unsupported GGUF version"), std::string::npos) << version;
  }
}

TEST(FormatGguf, RejectsBadMagic) {
  auto bytes = GgufWriter().build();
  bytes[0] = 'X';
  EXPECT_NE(error_of([&] { parse(bytes); }).find("not a GGUF file"), std::string::npos);
  EXPECT_NE(error_of([&] { GgufFile::parse(nullptr, 0, "empty"); }).find("empty: not a GGUF file"), std::string::npos);
}

TEST(FormatGguf, TensorShapesAreReversedAndViewsPointIntoTheData) {
  GgufWriter w;
  w.tensor("m", {3, 32}, test::kGgmlF32, test::f32_pattern(96, 5.0f));  // {out 3, in 32}
  w.tensor("v", {7}, test::kGgmlF32, test::f32_pattern(7, 9.0f));
  w.tensor("q", {2, 64}, test::kGgmlQ8_0, std::vector<uint8_t>(2 * 2 * 34, 0));
  w.tensor("b", {4, 2, 32}, test::kGgmlBF16, std::vector<uint8_t>(4 * 2 * 32 * 2, 0));
  const auto bytes = w.build();
  const GgufFile f = parse(bytes);
  ASSERT_EQ(f.tensors().size(), 4u);
  const Tensor* m = f.find_tensor("m");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->shape, (std::vector<int64_t>{3, 32}));
  EXPECT_EQ(m->dtype, DType::F32);
  EXPECT_EQ(first_f32(*m), 5.0f);
  EXPECT_EQ(m->f32()[95], 5.0f + 95 / 1024.0f);
  EXPECT_EQ((reinterpret_cast<uintptr_t>(m->data) - reinterpret_cast<uintptr_t>(bytes.data())) % 32, 0u);
  EXPECT_EQ(first_f32(*f.find_tensor("v")), 9.0f);
  EXPECT_EQ(f.find_tensor("q")->dtype, DType::Q8_0);
  EXPECT_EQ(f.find_tensor("q")->num_bytes(), 136u);
  EXPECT_EQ(f.find_tensor("b")->shape, (std::vector<int64_t>{4, 2, 32}));
  EXPECT_EQ(f.find_tensor("b")->dtype, DType::BF16);
  EXPECT_EQ(f.tensor_ggml_types()[2], test::kGgmlQ8_0);
  EXPECT_EQ(f.find_tensor("nope"), nullptr);
}

TEST(FormatGguf, HonoursCustomAlignment) {
  GgufWriter w;
  w.alignment = 64;
  w.tensor("a", {5}, test::kGgmlF32, test::f32_pattern(5, 1.0f));
  w.tensor("b", {3}, test::kGgmlF32, test::f32_pattern(3, 2.0f));
  const auto bytes = w.build();
  const GgufFile f = parse(bytes);
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.data_offset() % 64, 0u);
  EXPECT_EQ(first_f32(*f.find_tensor("b")), 2.0f);
}

// general.alignment 1 lets a hostile file put a block of f16 scales at an odd position: refused
// with the tensor's name, never read misaligned. 17-byte MXFP4 blocks (ggml type 39) shift the
// next tensor by one; with one or two of them in front, one layout puts the Q8_0 tensor at an odd
// file offset whatever the header's length.
TEST(FormatGguf, RejectsMisalignedBlockTensors) {
  int refused = 0;
  for (int num_shifts : {1, 2}) {
    GgufWriter w;
    w.alignment = 1;
    for (int i = 0; i < num_shifts; ++i) w.tensor("shift" + std::to_string(i), {1, 32}, 39, std::vector<uint8_t>(17, 0));
    w.tensor("blk.0.attn_q.weight", {1, 32}, test::kGgmlQ8_0, std::vector<uint8_t>(34, 0));
    const auto bytes = w.build();
    const std::string e = error_of([&] { parse(bytes); });
    if (e.empty()) continue;
    ++refused;
    EXPECT_NE(e.find("blk.0.attn_q.weight"), std::string::npos) << e;
    EXPECT_NE(e.find("not a multiple of 2"), std::string::npos) << e;
  }
  EXPECT_EQ(refused, 1);
}

TEST(FormatGguf, RejectsUnsupportedTensorTypesNamingTensorAndType) {
  {  // a real ggml type llmesh lacks (IQ2_XXS: 66-byte blocks of 256)
    GgufWriter w;
    w.tensor("blk.0.ffn_down.weight", {2, 256}, 16, std::vector<uint8_t>(2 * 66, 0));
    const auto bytes = w.build();
    const std::string e = error_of([&] { parse(bytes); });
    EXPECT_NE(e.find("test.gguf"), std::string::npos) << e;
    EXPECT_NE(e.find("blk.0.ffn_down.weight"), std::string::npos) << e;
    EXPECT_NE(e.find("IQ2_XXS"), std::string::npos) << e;
    EXPECT_NE(e.find("Q4_K"), std::string::npos) << e;  // the list of what llmesh reads
  }
  {  // an id ggml never used
    GgufWriter w;
    w.tensor("t", {2, 32}, 99, std::vector<uint8_t>(64, 0));
    const auto bytes = w.build();
    const std::string e = error_of([&] { parse(bytes); });
    EXPECT_NE(e.find("'t'"), std::string::npos) << e;
    EXPECT_NE(e.find("type 99"), std::string::npos) << e;
  }
}

// Every type llmesh reads maps to its ggml id and back, with ggml's block geometry.
TEST(FormatGguf, ReadsEveryBlockTypeWithGgmlSizes) {
  struct Case {
    uint32_t ggml_type;
    DType dtype;
    int64_t cols;
    size_t row_bytes;
  };
  const Case cases[] = {
      {3, DType::Q4_1, 64, 40},     {6, DType::Q5_0, 64, 44},    {7, DType::Q5_1, 64, 48},
      {10, DType::Q2_K, 512, 168},  {11, DType::Q3_K, 256, 110}, {12, DType::Q4_K, 256, 144},
      {13, DType::Q5_K, 256, 176},  {14, DType::Q6_K, 256, 210}, {15, DType::Q8_K, 256, 292},
      {20, DType::IQ4_NL, 32, 18},  {23, DType::IQ4_XS, 256, 136}, {39, DType::MXFP4, 64, 34},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(dtype_name(c.dtype));
    GgufWriter w;
    // zero bytes: every scale is +0, which is finite
    w.tensor("t", {3, c.cols}, c.ggml_type, std::vector<uint8_t>(3 * c.row_bytes, 0));
    const auto bytes = w.build();
    const GgufFile f = parse(bytes);
    EXPECT_EQ(f.find_tensor("t")->dtype, c.dtype);
    EXPECT_EQ(f.find_tensor("t")->row_bytes(), c.row_bytes);
    EXPECT_EQ(ggml_type_of(c.dtype), c.ggml_type);
    DType back;
    ASSERT_TRUE(dtype_from_ggml(c.ggml_type, &back));
    EXPECT_EQ(back, c.dtype);
  }
  {  // a super-block type's rows must be whole 256-value blocks
    GgufWriter w;
    w.tensor("blk.0.attn_q.weight", {2, 128}, 12, std::vector<uint8_t>(144, 0));
    const auto bytes = w.build();
    const std::string e = error_of([&] { parse(bytes); });
    EXPECT_NE(e.find("blk.0.attn_q.weight"), std::string::npos) << e;
    EXPECT_NE(e.find("block size 256"), std::string::npos) << e;
  }
}

// A NaN / Inf block scale is an error naming the file, tensor and block, for every field.
TEST(FormatGguf, RejectsNonFiniteBlockScales) {
  struct Case {
    uint32_t ggml_type;
    int64_t cols;
    size_t block_bytes;
    size_t offset;  // of the scale field in the block
    int width;      // 2: f16, 4: f32, 1: e8m0
  };
  const Case cases[] = {
      {8, 32, 34, 0, 2},     {2, 32, 18, 0, 2},    {3, 32, 20, 0, 2},    {3, 32, 20, 2, 2},
      {6, 32, 22, 0, 2},     {7, 32, 24, 2, 2},    {10, 256, 84, 80, 2}, {10, 256, 84, 82, 2},
      {11, 256, 110, 108, 2}, {12, 256, 144, 0, 2}, {12, 256, 144, 2, 2}, {13, 256, 176, 2, 2},
      {14, 256, 210, 208, 2}, {15, 256, 292, 0, 4}, {20, 32, 18, 0, 2},   {23, 256, 136, 0, 2},
      {39, 32, 17, 0, 1},
  };
  for (const Case& c : cases) {
    for (bool nan : {true, false}) {
      SCOPED_TRACE(testing::Message() << "ggml type " << c.ggml_type << " offset " << c.offset
                                      << (nan ? " nan" : " inf"));
      if (c.width == 1 && !nan) continue;  // e8m0 has no infinity
      std::vector<uint8_t> data(4 * c.block_bytes, 0);
      uint8_t* field = data.data() + 3 * c.block_bytes + c.offset;  // the last block of the second row
      if (c.width == 2) {
        const uint16_t h = nan ? 0x7e00 : 0xfc00;
        std::memcpy(field, &h, 2);
      } else if (c.width == 4) {
        const uint32_t f = nan ? 0x7fc00000u : 0x7f800000u;
        std::memcpy(field, &f, 4);
      } else {
        *field = 0xff;
      }
      GgufWriter w;
      w.tensor("fine", {1, c.cols}, c.ggml_type, std::vector<uint8_t>(c.block_bytes, 0));
      w.tensor("blk.3.ffn_up.weight", {2, 2 * c.cols}, c.ggml_type, data);
      const auto bytes = w.build();
      const std::string e = error_of([&] { parse(bytes); });
      EXPECT_NE(e.find("test.gguf"), std::string::npos) << e;
      EXPECT_NE(e.find("'blk.3.ffn_up.weight'"), std::string::npos) << e;
      EXPECT_NE(e.find("non-finite"), std::string::npos) << e;
      EXPECT_NE(e.find("block 3 of 4"), std::string::npos) << e;
    }
  }
}

// The scan splits big files over threads and still reports the first bad block in file order.
TEST(FormatGguf, ScaleScanOverThreadsFindsTheFirstBadBlock) {
  std::vector<Tensor> tensors(3);
  std::vector<std::vector<BlockQ8_0>> storage(3, std::vector<BlockQ8_0>(size_t(1) << 20, BlockQ8_0{}));
  for (int i = 0; i < 3; ++i) {
    tensors[size_t(i)].name = "t" + std::to_string(i);
    tensors[size_t(i)].dtype = DType::Q8_0;
    tensors[size_t(i)].shape = {1024, 1024 * 32};
    tensors[size_t(i)].data = storage[size_t(i)].data();
  }
  EXPECT_NO_THROW(check_block_scales(tensors, "big.gguf", 4));
  storage[2][5].d = 0x7c00;
  storage[1][700000].d = 0x7c01;
  storage[1][900000].d = 0x7c00;
  const std::string e = error_of([&] { check_block_scales(tensors, "big.gguf", 4); });
  EXPECT_NE(e.find("big.gguf: tensor 't1'"), std::string::npos) << e;
}

TEST(FormatGguf, RejectsStructuralProblems) {
  {  // quantized rows must be whole blocks
    GgufWriter w;
    w.tensor("q", {2, 40}, test::kGgmlQ8_0, std::vector<uint8_t>(200, 0));
    const auto bytes = w.build();
    EXPECT_NE(error_of([&] { parse(bytes); }).find("block size"), std::string::npos);
  }
  {  // duplicate tensor
    GgufWriter w;
    w.tensor("t", {4}, test::kGgmlF32, test::f32_pattern(4, 0));
    w.tensor("t", {4}, test::kGgmlF32, test::f32_pattern(4, 0));
    const auto bytes = w.build();
    EXPECT_NE(error_of([&] { parse(bytes); }).find("duplicate tensor 't'"), std::string::npos);
  }
  {  // duplicate key
    GgufWriter w;
    w.kv_u32("k", 1);
    w.kv_u32("k", 2);
    const auto bytes = w.build();
    EXPECT_NE(error_of([&] { parse(bytes); }).find("duplicate metadata key 'k'"), std::string::npos);
  }
  {  // alignment not a power of two
    GgufWriter w;
    w.write_alignment_key = false;
    w.kv_u32("general.alignment", 48);
    const auto bytes = w.build();
    EXPECT_NE(error_of([&] { parse(bytes); }).find("power of two"), std::string::npos);
  }
}

// Builds a header by hand to plant absurd counts and lengths.
std::vector<uint8_t> header(uint64_t tensor_count, uint64_t kv_count, const test::Bytes& rest) {
  test::Bytes b;
  b.data = {'G', 'G', 'U', 'F'};
  b.put<uint32_t>(3);
  b.put<uint64_t>(tensor_count);
  b.put<uint64_t>(kv_count);
  b.data.insert(b.data.end(), rest.data.begin(), rest.data.end());
  return b.data;
}

TEST(FormatGguf, RejectsAbsurdCountsAndLengthsWithoutAllocating) {
  test::Bytes none;
  EXPECT_NE(error_of([&] { parse(header(1ull << 62, 0, none)); }).find("tensors cannot fit"), std::string::npos);
  EXPECT_NE(error_of([&] { parse(header(0, ~0ull, none)); }).find("metadata entries cannot fit"), std::string::npos);
  {
    test::Bytes key;
    key.put<uint64_t>(1ull << 60);  // key length
    key.data.resize(key.data.size() + 16, 'k');
    EXPECT_NE(error_of([&] { parse(header(0, 1, key)); }).find("a metadata key of"), std::string::npos);
  }
  {
    test::Bytes kv;
    kv.put_string("arr");
    kv.put<uint32_t>(test::kArray);
    kv.put<uint32_t>(test::kString);
    kv.put<uint64_t>(1ull << 61);  // element count
    kv.data.resize(kv.data.size() + 64, 0);
    EXPECT_NE(error_of([&] { parse(header(0, 1, kv)); }).find("array of"), std::string::npos);
  }
  {
    test::Bytes kv;
    kv.put_string("arr");
    kv.put<uint32_t>(test::kArray);
    kv.put<uint32_t>(test::kU64);
    kv.put<uint64_t>((1ull << 61) + 1);  // count * 8 would overflow
    kv.data.resize(kv.data.size() + 64, 0);
    EXPECT_NE(error_of([&] { parse(header(0, 1, kv)); }).find("does not fit"), std::string::npos);
  }
  {
    test::Bytes t;
    t.put_string("t");
    t.put<uint32_t>(2);
    t.put<uint64_t>(1ull << 40);
    t.put<uint64_t>(1ull << 40);  // 2^80 elements
    t.put<uint32_t>(0);
    t.put<uint64_t>(0);
    EXPECT_NE(error_of([&] { parse(header(1, 0, t)); }).find("absurd dimension"), std::string::npos);
  }
  {
    test::Bytes t;
    t.put_string("t");
    t.put<uint32_t>(9);  // dims
    t.data.resize(t.data.size() + 100, 0);
    EXPECT_NE(error_of([&] { parse(header(1, 0, t)); }).find("has 9 dimensions"), std::string::npos);
  }
  {  // nested arrays deeper than the limit
    test::Bytes kv;
    kv.put_string("deep");
    kv.put<uint32_t>(test::kArray);
    for (int i = 0; i < 20; ++i) {
      kv.put<uint32_t>(test::kArray);
      kv.put<uint64_t>(1);
    }
    kv.data.resize(kv.data.size() + 64, 0);
    EXPECT_NE(error_of([&] { parse(header(0, 1, kv)); }).find("nests arrays"), std::string::npos);
  }
  {
    test::Bytes kv;
    kv.put_string("k");
    kv.put<uint32_t>(77);  // value type
    kv.data.resize(kv.data.size() + 16, 0);
    EXPECT_NE(error_of([&] { parse(header(0, 1, kv)); }).find("unknown value type 77"), std::string::npos);
  }
}

TEST(FormatGguf, TensorPastEndOfFileIsAnError) {
  GgufWriter w;
  w.tensor("big", {64, 64}, test::kGgmlF32, test::f32_pattern(64 * 64, 0));
  auto bytes = w.build();
  bytes.resize(bytes.size() - 4);
  const std::string e = error_of([&] { parse(bytes); });
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
  EXPECT_NE(e.find("'big'"), std::string::npos) << e;
}

// Every prefix of a valid file must be rejected with an Error (never a crash or a hang).
TEST(FormatGguf, EveryTruncationThrowsError) {
  TinySpec spec;
  spec.arch = "qwen3moe";
  spec.experts = 4;
  spec.experts_used = 2;
  spec.moe_ffn = 32;
  spec.layers = 1;
  const auto bytes = test::tiny_gguf_writer(spec).build();
  ASSERT_NO_THROW(model_from_gguf(parse(bytes), "test.gguf"));
  const GgufFile full = parse(bytes);
  const size_t header_end = full.data_offset();
  size_t num_checked = 0;
  for (size_t size = 0; size < bytes.size(); size += size < header_end ? 1 : 61) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + ptrdiff_t(size));  // exact-size buffer for ASan
    EXPECT_THROW(model_from_gguf(parse(prefix), "test.gguf"), Error) << "truncated at " << size;
    ++num_checked;
  }
  EXPECT_GT(num_checked, header_end);
}

// Random byte corruption of the header: Error or success, never a crash.
TEST(FormatGguf, CorruptHeadersNeverCrash) {
  TinySpec spec;
  spec.layers = 1;
  const auto bytes = test::tiny_gguf_writer(spec).build();
  const size_t header_end = parse(bytes).data_offset();
  std::mt19937 rng(1234);
  int num_errors = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<uint8_t> corrupt = bytes;
    const int num_flips = 1 + int(rng() % 4);
    for (int i = 0; i < num_flips; ++i) corrupt[rng() % header_end] = uint8_t(rng());
    try {
      const GgufFile gguf = parse(corrupt);
      ModelFiles m = model_from_gguf(gguf, "corrupt.gguf");
      (void)tokenizer_from_gguf(gguf);
      EXPECT_GT(m.config.vocab_size, 0);
    } catch (const Error&) {
      ++num_errors;
    }
  }
  EXPECT_GT(num_errors, 100);
}

TEST(FormatGguf, DenseConfigVocabAndWeights) {
  TinySpec spec;  // qwen3: qk_norm, head_dim 32 != hidden/heads
  const auto bytes = test::tiny_gguf_writer(spec).build();
  const GgufFile gguf = parse(bytes);
  const ModelFiles m = model_from_gguf(gguf, "dir/tiny.gguf");
  const TokenizerFiles t = tokenizer_from_gguf(gguf);
  const ModelConfig& c = m.config;
  EXPECT_EQ(m.format, "gguf");
  EXPECT_EQ(m.name, "tiny-qwen3");
  EXPECT_EQ(c.arch, "qwen3");
  EXPECT_EQ(c.vocab_size, 40);
  EXPECT_EQ(c.hidden_size, 64);
  EXPECT_EQ(c.intermediate_size, 128);
  EXPECT_EQ(c.num_layers, 2);
  EXPECT_EQ(c.num_heads, 4);
  EXPECT_EQ(c.num_kv_heads, 2);
  EXPECT_EQ(c.head_dim, 32);
  EXPECT_EQ(c.max_position, 4096);
  EXPECT_FLOAT_EQ(c.rms_norm_eps, 1e-6f);
  EXPECT_FLOAT_EQ(c.rope_theta, 1e6f);
  EXPECT_EQ(c.rope_style, RopeStyle::Neox);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_FALSE(c.attention_bias);
  EXPECT_TRUE(c.qk_norm);
  EXPECT_FALSE(c.is_moe());

  const BpeVocab& v = t.vocab;
  EXPECT_EQ(v.tokens.size(), 40u);
  EXPECT_EQ(v.tokens[6], "abcd");
  ASSERT_EQ(v.merges.size(), 3u);
  EXPECT_EQ(v.merges[2], (std::pair<std::string, std::string>{"ab", "cd"}));
  ASSERT_EQ(v.added_tokens.size(), 4u);
  EXPECT_EQ(v.added_tokens[0].id, 7);
  EXPECT_EQ(v.added_tokens[0].content, "<|bos|>");
  EXPECT_TRUE(v.added_tokens[0].special);
  EXPECT_EQ(v.added_tokens[3].content, "<tool>");
  EXPECT_FALSE(v.added_tokens[3].special);
  EXPECT_EQ(v.pre_tokenizer, "qwen2");
  EXPECT_FALSE(v.ignore_merges);
  EXPECT_EQ(v.bos_token_id, 7);
  EXPECT_EQ(v.eos_token_id, 8);
  EXPECT_FALSE(v.add_bos_token);
  EXPECT_EQ(t.bos_token, "<|bos|>");
  EXPECT_EQ(t.eos_token, "<|eos|>");
  EXPECT_EQ(t.eos_token_ids, (std::vector<int32_t>{8, 9}));
  EXPECT_NE(t.chat_template.find("bos_token"), std::string::npos);

  // Canonical views point at each tensor's own bytes.
  for (const test::SpecTensor& t : test::spec_tensors(spec)) {
    const Tensor& view = m.weights.get(t.gguf_name);
    EXPECT_EQ(view.shape, t.shape) << t.gguf_name;
    EXPECT_EQ(first_f32(view), t.start) << t.gguf_name;
  }
  EXPECT_EQ(m.weights.file_tensors().size(), test::spec_tensors(spec).size());
  EXPECT_NE(error_of([&] {
              m.weights.get("blk.9.attn_q.weight");
            }).find("dir/tiny.gguf: missing tensor 'blk.9.attn_q.weight'"),
            std::string::npos);
}

TEST(FormatGguf, WellKnownEndOfTurnTokensEndGeneration) {
  TinySpec spec;
  auto bytes = test::tiny_gguf_writer(spec).build();
  // Rename control token 7 "<|bos|>" to "<|end|>" (same length), an end-of-turn marker.
  const std::string needle = "<|bos|>";
  auto it = std::search(bytes.begin(), bytes.end(), needle.begin(), needle.end());
  ASSERT_NE(it, bytes.end());
  std::copy_n("<|end|>", 7, it);
  const TokenizerFiles t = tokenizer_from_gguf(parse(bytes));
  EXPECT_EQ(t.eos_token_ids, (std::vector<int32_t>{8, 9, 7}));
}

TEST(FormatGguf, LlamaAndQwen2Options) {
  TinySpec llama;
  llama.arch = "llama";
  llama.tied = true;
  const auto llama_bytes = test::tiny_gguf_writer(llama).build();
  const ModelFiles m = model_from_gguf(parse(llama_bytes), "llama.gguf");
  EXPECT_EQ(m.config.rope_style, RopeStyle::Interleaved);
  EXPECT_TRUE(m.config.tie_word_embeddings);
  EXPECT_FALSE(m.config.qk_norm);
  EXPECT_EQ(m.config.rope_scaling.type, "");
  EXPECT_TRUE(m.weights.has("rope_freqs.weight"));
  EXPECT_EQ(m.weights.get("rope_freqs.weight").shape, (std::vector<int64_t>{16}));
  const TokenizerFiles t = tokenizer_from_gguf(parse(llama_bytes));
  EXPECT_EQ(t.vocab.pre_tokenizer, "llama3");
  EXPECT_TRUE(t.vocab.ignore_merges);
  EXPECT_TRUE(t.vocab.add_bos_token);
  EXPECT_EQ(m.config.sliding_window, 0);

  // llama.attention.sliding_window: a window on every layer (llama.cpp's key; its Mistral files have none).
  test::GgufWriter windowed = test::tiny_gguf_writer(llama);
  windowed.kv_u32("llama.attention.sliding_window", 16);
  const ModelConfig w = read_gguf_config(parse(windowed.build()));
  EXPECT_EQ(w.sliding_window, 16);
  EXPECT_EQ(w.layer_window(0), 16);
  EXPECT_EQ(w.layer_window(1), 16);
  EXPECT_EQ(w.max_context(), 4096);  // the window does not cap the context

  TinySpec qwen2;
  qwen2.arch = "qwen2";
  const auto bytes = test::tiny_gguf_writer(qwen2).build();
  const ModelFiles q = model_from_gguf(parse(bytes), "qwen2.gguf");
  EXPECT_TRUE(q.config.attention_bias);
  EXPECT_FALSE(q.config.qk_norm);
  EXPECT_EQ(q.config.rope_style, RopeStyle::Neox);
  EXPECT_EQ(q.weights.get("blk.1.attn_k.bias").shape, (std::vector<int64_t>{64}));
}

TEST(FormatGguf, MoeExpertsGetPerExpertViews) {
  TinySpec spec;
  spec.arch = "qwen3moe";
  spec.experts = 4;
  spec.experts_used = 2;
  spec.moe_ffn = 32;
  for (uint32_t type : {test::kGgmlF32, test::kGgmlQ8_0}) {
    const auto bytes = test::tiny_gguf_writer(spec, type).build();
    const ModelFiles m = model_from_gguf(parse(bytes), "moe.gguf");
    EXPECT_EQ(m.config.num_experts, 4);
    EXPECT_EQ(m.config.num_experts_per_token, 2);
    EXPECT_EQ(m.config.moe_intermediate_size, 32);
    EXPECT_TRUE(m.config.norm_topk_prob);
    const Tensor* stacked = nullptr;
    for (const Tensor& t : m.weights.file_tensors()) {
      if (t.name == "blk.1.ffn_down_exps.weight") stacked = &t;
    }
    ASSERT_NE(stacked, nullptr);
    EXPECT_EQ(stacked->shape, (std::vector<int64_t>{4, 64, 32}));
    for (int e = 0; e < 4; ++e) {
      const Tensor& view = m.weights.get("blk.1.ffn_down_exps." + std::to_string(e) + ".weight");
      EXPECT_EQ(view.shape, (std::vector<int64_t>{64, 32}));
      EXPECT_EQ(view.name, "blk.1.ffn_down_exps." + std::to_string(e) + ".weight");
      EXPECT_EQ(static_cast<const uint8_t*>(view.data),
                static_cast<const uint8_t*>(stacked->data) + e * view.num_bytes());
      if (type == test::kGgmlF32) {
        EXPECT_EQ(first_f32(view), first_f32(*stacked) + float(e * 64 * 32) / 1024.0f);
      }
    }
    EXPECT_FALSE(m.weights.has("blk.1.ffn_down_exps.4.weight"));
    EXPECT_FALSE(m.weights.has("blk.1.ffn_down_exps.weight"));
  }
}

TEST(FormatGguf, ConfigAndWeightErrors) {
  auto load = [](GgufWriter w) {
    const auto bytes = w.build();
    return error_of([&] { model_from_gguf(parse(bytes), "m.gguf"); });
  };
  TinySpec spec;
  {
    GgufWriter w = test::tiny_gguf_writer(spec);
    auto bytes = w.build();
    // Rename the architecture in place: "qwen3" -> "gemma" in general.architecture's value.
    const std::string needle = "qwen3";
    auto it = std::search(bytes.begin(), bytes.end(), needle.begin(), needle.end());
    std::copy_n("gemma", 5, it);
    EXPECT_NE(error_of([&] { model_from_gguf(parse(bytes), "m.gguf"); }).find("unknown architecture 'gemma'"),
              std::string::npos);
  }
  {  // a required config key is missing
    GgufWriter w;
    w.kv_string("general.architecture", "qwen3");
    EXPECT_NE(load(w).find("qwen3.embedding_length"), std::string::npos);
  }
  {  // tensors llmesh does not use are fine
    GgufWriter w = test::tiny_gguf_writer(spec);
    w.tensor("extra", {4}, test::kGgmlF32, test::f32_pattern(4, 0));
    EXPECT_EQ(load(w), "");
  }
  {  // shape contradicting the config: token_embd not {vocab, hidden}
    GgufWriter w = test::tiny_gguf_writer(spec);
    w.kv_u32("qwen3.vocab_size", 41);
    const std::string e = load(w);
    EXPECT_NE(e.find("'token_embd.weight' has shape [40, 64], but the config implies [41, 64]"), std::string::npos)
        << e;
  }
  {  // unsupported tokenizer
    GgufWriter w = test::tiny_gguf_writer(spec);
    auto bytes = w.build();
    const std::string needle = "gpt2";
    auto it = std::search(bytes.begin(), bytes.end(), needle.begin(), needle.end());
    std::copy_n("llam", 4, it);
    EXPECT_NE(error_of([&] { tokenizer_from_gguf(parse(bytes)); }).find("unsupported tokenizer model 'llam'"),
              std::string::npos);
  }
  {  // heads not a multiple of kv heads
    GgufWriter w2;
    w2.kv_string("general.architecture", "qwen3");
    w2.kv_u32("qwen3.context_length", 4096);
    w2.kv_u32("qwen3.embedding_length", 64);
    w2.kv_u32("qwen3.block_count", 1);
    w2.kv_u32("qwen3.feed_forward_length", 128);
    w2.kv_u32("qwen3.attention.head_count", 4);
    w2.kv_u32("qwen3.attention.head_count_kv", 3);
    w2.kv_f32("qwen3.attention.layer_norm_rms_epsilon", 1e-6f);
    w2.kv_u32("qwen3.vocab_size", 40);
    EXPECT_NE(load(w2).find("not a multiple of num_kv_heads"), std::string::npos);
  }
}

TEST(FormatGguf, MissingRequiredTensorIsNamed) {
  TinySpec spec;
  // The spec's writer without blk.1.ffn_down.weight: rebuild it and skip that tensor.
  GgufWriter full = test::tiny_gguf_writer(spec);
  auto bytes = full.build();
  const GgufFile f = parse(bytes);
  WeightStore store("m.gguf");
  for (const Tensor& t : f.tensors()) {
    if (t.name != "blk.1.ffn_down.weight") store.add(t.name, t);
  }
  const std::string e = error_of([&] { check_weights_match_config(store, read_gguf_config(f)); });
  EXPECT_NE(e.find("missing required tensor 'blk.1.ffn_down.weight'"), std::string::npos) << e;
}

TEST(FormatGguf, OpenModelOnFiles) {
  const auto dir = test::fresh_dir("gguf_open");
  TinySpec spec;
  const auto bytes = test::tiny_gguf_writer(spec, test::kGgmlF16).build();
  test::write_file(dir / "tiny.gguf", bytes);
  {
    const ModelFiles m = open_model((dir / "tiny.gguf").string());
    EXPECT_EQ(m.weights.get("blk.0.attn_q.weight").dtype, DType::F16);
    EXPECT_EQ(m.weights.get("blk.0.attn_norm.weight").dtype, DType::F32);
    EXPECT_EQ(m.config.num_layers, 2);
  }
  test::write_file(dir / "cut.gguf", std::vector<uint8_t>(bytes.begin(), bytes.begin() + 1000));
  const std::string cut_error = error_of([&] { open_model((dir / "cut.gguf").string()); });
  EXPECT_NE(cut_error.find("cut.gguf: truncated"), std::string::npos) << cut_error;
  EXPECT_NE(error_of([&] { open_model((dir / "nope.gguf").string()); }).find("nope.gguf: no such file"),
            std::string::npos);
  test::write_text(dir / "text.gguf", "hello world, not a model");
  EXPECT_NE(error_of([&] { open_model((dir / "text.gguf").string()); }).find("not a GGUF file"), std::string::npos);
  test::write_text(dir / "empty.gguf", "");
  EXPECT_NE(error_of([&] { open_model((dir / "empty.gguf").string()); }).find("not a GGUF file"), std::string::npos);
}

}  // namespace
}  // namespace llmesh
