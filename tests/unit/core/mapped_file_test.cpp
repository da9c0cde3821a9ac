#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/mapped_file.h"

namespace llmesh {
namespace {

// A file of n pseudo-random bytes; removed when the test ends.
struct TempFile {
  std::string path;
  std::vector<uint8_t> bytes;
  explicit TempFile(size_t n) : path(::testing::TempDir() + "mapped_file_" + std::to_string(::getpid())), bytes(n) {
    uint32_t state = 12345;
    for (auto& b : bytes) b = uint8_t((state = state * 1664525u + 1013904223u) >> 24);
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(n));
  }
  ~TempFile() { std::remove(path.c_str()); }
};

TEST(MappedFile, RamCopyKeepsAddressAndBytes) {
  TempFile file((size_t(5) << 20) + 12345);  // not a multiple of the page or huge-page size
  MappedFile mapped(file.path);
  const uint8_t* before = mapped.data();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(before) % (size_t(2) << 20), 0u) << "mapping not 2 MiB aligned";
  mapped.load("test", WeightResidency::Ram);
  EXPECT_TRUE(mapped.in_ram());
  EXPECT_EQ(mapped.data(), before);
  ASSERT_EQ(mapped.size(), file.bytes.size());
  EXPECT_EQ(std::vector<uint8_t>(mapped.data(), mapped.data() + mapped.size()), file.bytes);
}

TEST(MappedFile, MmapModeLeavesTheFileMapped) {
  TempFile file(100000);
  MappedFile mapped(file.path);
  mapped.load("test", WeightResidency::Mmap);
  EXPECT_FALSE(mapped.in_ram());
  EXPECT_EQ(std::vector<uint8_t>(mapped.data(), mapped.data() + mapped.size()), file.bytes);
}

TEST(MappedFile, ParsesResidencyNames) {
  EXPECT_EQ(parse_weight_residency("auto"), WeightResidency::Auto);
  EXPECT_EQ(parse_weight_residency("ram"), WeightResidency::Ram);
  EXPECT_EQ(parse_weight_residency("mmap"), WeightResidency::Mmap);
  EXPECT_THROW(parse_weight_residency("disk"), Error);
}

TEST(MappedFile, MissingFileNamesThePath) {
  try {
    MappedFile mapped("/nonexistent/weights.gguf");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/weights.gguf"), std::string::npos);
  }
}

}  // namespace
}  // namespace llmesh
