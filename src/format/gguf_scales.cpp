// Load-time check that quantized tensors' block scales are finite: a NaN or Inf scale
// (a corrupt or badly converted file) would otherwise turn whole rows of logits into NaN
// far from the cause. Reading the scales touches every page of the weights, so the
// blocks are split into chunks that a few threads take in turn; the pages read are the
// ones inference reads next, so on a warm page cache this costs memory bandwidth only.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/error.h"
#include "format/gguf.h"

namespace llmesh::format {

namespace {

enum class ScaleKind : uint8_t { F16, F32, E8M0 };

struct ScaleField {
  uint16_t offset;  // within the block
  ScaleKind kind;
};

// The scale fields of one block of `dtype` (none for plain float types).
std::vector<ScaleField> scale_fields(DType dtype) {
  switch (dtype) {
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q5_0:
    case DType::IQ4_NL:
    case DType::IQ4_XS: return {{0, ScaleKind::F16}};
    case DType::Q4_1: return {{offsetof(BlockQ4_1, d), ScaleKind::F16}, {offsetof(BlockQ4_1, m), ScaleKind::F16}};
    case DType::Q5_1: return {{offsetof(BlockQ5_1, d), ScaleKind::F16}, {offsetof(BlockQ5_1, m), ScaleKind::F16}};
    case DType::Q2_K: return {{offsetof(BlockQ2_K, d), ScaleKind::F16}, {offsetof(BlockQ2_K, dmin), ScaleKind::F16}};
    case DType::Q3_K: return {{offsetof(BlockQ3_K, d), ScaleKind::F16}};
    case DType::Q4_K: return {{offsetof(BlockQ4_K, d), ScaleKind::F16}, {offsetof(BlockQ4_K, dmin), ScaleKind::F16}};
    case DType::Q5_K: return {{offsetof(BlockQ5_K, d), ScaleKind::F16}, {offsetof(BlockQ5_K, dmin), ScaleKind::F16}};
    case DType::Q6_K: return {{offsetof(BlockQ6_K, d), ScaleKind::F16}};
    case DType::Q8_K: return {{offsetof(BlockQ8_K, d), ScaleKind::F32}};
    case DType::MXFP4: return {{offsetof(BlockMXFP4, e), ScaleKind::E8M0}};
    case DType::F32:
    case DType::F16:
    case DType::BF16: return {};
  }
  return {};
}

// First block in [begin, end) whose scale field is NaN/Inf (one tight loop per kind), or end.
template <typename Bits, Bits kMask, Bits kNonFinite>
int64_t first_non_finite(const uint8_t* p, size_t stride, int64_t begin, int64_t end) {
  for (int64_t b = begin; b < end; ++b) {
    Bits bits;
    std::memcpy(&bits, p + size_t(b) * stride, sizeof(Bits));
    if ((bits & kMask) == kNonFinite) return b;
  }
  return end;
}

int64_t first_bad_block(const uint8_t* base, size_t stride, ScaleField field, int64_t begin, int64_t end) {
  const uint8_t* p = base + field.offset;
  switch (field.kind) {
    case ScaleKind::F16: return first_non_finite<uint16_t, 0x7c00, 0x7c00>(p, stride, begin, end);
    case ScaleKind::F32: return first_non_finite<uint32_t, 0x7f800000u, 0x7f800000u>(p, stride, begin, end);
    case ScaleKind::E8M0: return first_non_finite<uint8_t, 0xff, 0xff>(p, stride, begin, end);
  }
  return end;
}

const char* kind_name(ScaleKind kind) {
  switch (kind) {
    case ScaleKind::F16: return "f16";
    case ScaleKind::F32: return "f32";
    case ScaleKind::E8M0: return "e8m0";
  }
  return "?";
}

struct Chunk {
  size_t tensor;
  int64_t block_begin, block_end;
};

constexpr int64_t kBlocksPerChunk = 1 << 16;       // ~2 MiB of Q8_0
constexpr size_t kMinBytesPerThread = size_t(32) << 20;  // below this, threads cost more than they save

}  // namespace

void check_block_scales(const std::vector<Tensor>& tensors, const std::string& source, int num_threads) {
  std::vector<Chunk> chunks;
  size_t total_bytes = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (dtype_block_size(t.dtype) == 1 || t.data == nullptr) continue;
    const int64_t num_blocks = t.num_elements() / dtype_block_size(t.dtype);
    for (int64_t b = 0; b < num_blocks; b += kBlocksPerChunk)
      chunks.push_back({i, b, std::min(num_blocks, b + kBlocksPerChunk)});
    total_bytes += t.num_bytes();
  }
  if (chunks.empty()) return;

  struct Bad {
    size_t tensor;
    int64_t block;
    ScaleField field;
  };
  std::atomic<size_t> next{0};
  std::atomic<bool> found{false};
  std::mutex mutex;
  std::optional<Bad> first_bad;
  auto worker = [&] {
    while (!found.load(std::memory_order_relaxed)) {
      const size_t c = next.fetch_add(1);
      if (c >= chunks.size()) return;
      const Chunk& chunk = chunks[c];
      const Tensor& t = tensors[chunk.tensor];
      const std::vector<ScaleField> fields = scale_fields(t.dtype);
      const size_t block_bytes = dtype_block_bytes(t.dtype);
      const auto* base = static_cast<const uint8_t*>(t.data);
      int64_t bad = chunk.block_end;
      ScaleField bad_field{};
      for (const ScaleField& field : fields) {
        const int64_t b = first_bad_block(base, block_bytes, field, chunk.block_begin, bad);
        if (b < bad) {
          bad = b;
          bad_field = field;
        }
      }
      if (bad == chunk.block_end) continue;
      std::lock_guard<std::mutex> lock(mutex);
      // Chunks are taken in file order and finished once taken, so every chunk before this
      // one is scanned too: keeping the earliest makes the message independent of timing.
      if (!first_bad || chunk.tensor < first_bad->tensor ||
          (chunk.tensor == first_bad->tensor && bad < first_bad->block))
        first_bad = Bad{chunk.tensor, bad, bad_field};
      found = true;
      return;
    }
  };
  const int threads =
      int(std::clamp<size_t>(total_bytes / kMinBytesPerThread, 1, size_t(std::max(1, num_threads))));
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i) pool.emplace_back(worker);
    for (std::thread& thread : pool) thread.join();
  }
  if (first_bad) {
    const Tensor& t = tensors[first_bad->tensor];
    fail("{}: tensor '{}' ({} {}) has a non-finite {} scale (NaN or Inf) in block {} of {} (byte {} of the block); "
         "the file is corrupt or was converted wrongly",
         source, t.name, dtype_name(t.dtype), t.shape_string(), kind_name(first_bad->field.kind), first_bad->block,
         t.num_elements() / dtype_block_size(t.dtype), first_bad->field.offset);
  }
}

}  // namespace llmesh::format
