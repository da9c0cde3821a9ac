// The scalar dequantizers against blocks llama.cpp's llama-quantize wrote
// (tests/fixtures/quants/, made by tools/make_quant_fixtures.py): the floats must hash
// to the manifest's value, which is the numpy reference's dequantization
// (tools/check_quant_fixtures.py checks that side), so C++ and numpy agree bit for bit;
// and they must be close to the original f32 values.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/ops.h"

namespace llmesh::kernels {
namespace {

const std::string kDir = std::string(LLMESH_SOURCE_DIR) + "/tests/fixtures/quants/";

std::vector<char> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

uint64_t fnv1a64(const void* data, size_t size) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) h = (h ^ static_cast<const uint8_t*>(data)[i]) * 0x100000001b3ull;
  return h;
}

TEST(QuantFixtures, DequantizeLlamaCppBlocksLikeTheNumpyReference) {
  std::ifstream manifest(kDir + "MANIFEST");
  ASSERT_TRUE(manifest) << kDir;
  std::string line;
  int checked = 0;
  while (std::getline(manifest, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name, tensor, qtype, digest;
    int64_t rows = 0, cols = 0;
    fields >> name >> rows >> cols >> tensor >> qtype >> digest;
    SCOPED_TRACE(name + " from llama-quantize " + qtype + " " + tensor);
    DType dtype;
    ASSERT_TRUE(parse_dtype(name, &dtype));
    const std::vector<char> blocks = read_file(kDir + name + ".blocks");
    const std::vector<char> original_bytes = read_file(kDir + name + ".f32");
    ASSERT_EQ(blocks.size(), size_t(rows) * dtype_row_bytes(dtype, cols));
    ASSERT_EQ(original_bytes.size(), size_t(rows * cols) * 4);
    std::vector<float> out(size_t(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
      dequantize_row(dtype, blocks.data() + size_t(r) * dtype_row_bytes(dtype, cols), out.data() + r * cols, cols);
    EXPECT_EQ(fnv1a64(out.data(), out.size() * 4), std::stoull(digest, nullptr, 16))
        << "the C++ floats differ from the numpy reference's";
    const auto* original = reinterpret_cast<const float*>(original_bytes.data());
    double err = 0, norm = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      err += (double(out[i]) - original[i]) * (double(out[i]) - original[i]);
      norm += double(original[i]) * original[i];
    }
    EXPECT_LT(err / norm, 0.2);  // per-type bounds: tools/check_quant_fixtures.py
    ++checked;
  }
  EXPECT_EQ(checked, 13);
}

}  // namespace
}  // namespace llmesh::kernels
