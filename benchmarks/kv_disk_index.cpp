// How long a restart takes to index a large KV disk tier: writes N block
// files (payload P bytes each, default 100,000 x 4 KiB) through the disk
// tier, then times a fresh DiskTier indexing that directory (headers only),
// cold in the page cache when run as root (drops caches first) and warm.
//
//   build/benchmarks/llmesh_kv_disk_index [num_blocks] [payload_bytes] [dir]
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "kv/disk_tier.h"

using namespace llmesh::kv;

namespace {

double index_seconds(const DiskTierOptions& options, int64_t* num_blocks) {
  const auto t0 = std::chrono::steady_clock::now();
  DiskTier tier(options);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  *num_blocks = tier.recovery().blocks;
  return s;
}

bool drop_page_cache() {
  sync();
  std::ofstream f("/proc/sys/vm/drop_caches");
  if (!f) return false;
  f << "3\n";
  return bool(f);
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t num_blocks = argc > 1 ? std::atoll(argv[1]) : 100000;
  const int64_t payload_bytes = argc > 2 ? std::atoll(argv[2]) : 4096;
  const std::string dir = argc > 3 ? argv[3] : "/tmp/llmesh-kv-index-bench";
  std::filesystem::remove_all(dir);
  DiskTierOptions options;
  options.dir = dir;
  options.budget_bytes = int64_t(1) << 40;
  options.layout = {0x1234, 16, uint64_t(payload_bytes)};
  {
    DiskTier writer(options);
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < num_blocks; ++i) {
      BlockRecord r;
      r.hash = BlockHash(0x9e3779b97f4a7c15ull * uint64_t(i + 1));
      r.parent = i == 0 ? 0 : BlockHash(0x9e3779b97f4a7c15ull * uint64_t(i));
      r.tokens.assign(16, int32_t(i));
      r.payload.assign(size_t(payload_bytes), std::byte(i & 0xff));
      while (!writer.enqueue(r)) writer.flush();  // the queue is bounded: wait for room, drop nothing
    }
    writer.flush();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("wrote %lld blocks of %lld B in %.2f s (%.0f blocks/s)\n", (long long)num_blocks,
                (long long)payload_bytes, s, double(num_blocks) / s);
  }
  int64_t found = 0;
  const bool dropped = drop_page_cache();
  const double cold = index_seconds(options, &found);
  std::printf("index, %s: %lld blocks in %.3f s (%.1f us/block)\n", dropped ? "cold page cache" : "page cache as is",
              (long long)found, cold, cold * 1e6 / double(std::max<int64_t>(found, 1)));
  const double warm = index_seconds(options, &found);
  std::printf("index, warm page cache: %lld blocks in %.3f s (%.1f us/block)\n", (long long)found, warm,
              warm * 1e6 / double(std::max<int64_t>(found, 1)));
  std::filesystem::remove_all(dir);
  return found == num_blocks ? 0 : 1;
}
