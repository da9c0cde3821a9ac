// The disk tier: what survives a restart, what is never served (flipped
// bytes, truncated files, another model's files), the LRU budget, write
// errors turning writing off, and the file format's own checks.
#include "kv/disk_tier.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "kv_test_util.h"

namespace llmesh {

using kv::BlockFileLayout;
using kv::BlockRecord;
using kv::DiskTier;
using kv::DiskTierOptions;
using testing::toks;

namespace fs = std::filesystem;

namespace {

constexpr uint32_t kBlock = 4;
constexpr uint64_t kPayload = 256;
const BlockFileLayout kLayout{0xabcdef, kBlock, kPayload};
// header 64 + tokens 16 + payload 256
constexpr int64_t kFileBytes = 336;

BlockRecord rec(kv::BlockHash h) {
  std::vector<std::byte> payload(kPayload);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = std::byte((h * 31 + i) & 0xff);
  return BlockRecord{h, h + 1000, toks(int32_t(h) * 10, kBlock), payload};
}

class DiskTierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::path(::testing::TempDir()) / ("llmesh-disk-tier-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  DiskTierOptions options(int64_t budget = 1 << 20, const BlockFileLayout& layout = kLayout) const {
    return DiskTierOptions{dir.string(), budget, int64_t(1) << 20, layout};
  }
  std::string file(kv::BlockHash h) const { return (dir / kv::block_file_name(h)).string(); }
  bool read_back(DiskTier& t, kv::BlockHash h) {
    std::vector<std::byte> out(kPayload);
    if (!t.read(h, rec(h).tokens, out)) return false;
    EXPECT_EQ(out, rec(h).payload);
    return true;
  }
  fs::path dir;
};

TEST_F(DiskTierTest, BlocksSurviveARestart) {
  {
    DiskTier t(options());
    for (kv::BlockHash h = 1; h <= 3; ++h) EXPECT_TRUE(t.enqueue(rec(h)));
    EXPECT_FALSE(t.enqueue(rec(2)));  // already queued or stored
    t.flush();
    EXPECT_EQ(t.stats().writes, 3);
    EXPECT_EQ(t.stats().bytes, 3 * kFileBytes);
    EXPECT_EQ(int64_t(fs::file_size(file(1))), kFileBytes);
  }
  DiskTier t(options());
  EXPECT_EQ(t.recovery().blocks, 3);
  EXPECT_EQ(t.recovery().bytes, 3 * kFileBytes);
  EXPECT_TRUE(t.contains(2, rec(2).tokens));
  EXPECT_FALSE(t.contains(2, toks(0, kBlock)));  // the key with other tokens
  EXPECT_TRUE(read_back(t, 1));
  EXPECT_TRUE(read_back(t, 3));
  EXPECT_EQ(t.stats().reads, 2);
}

TEST_F(DiskTierTest, DestructionWritesWhatIsQueued) {
  {
    DiskTier t(options());
    for (kv::BlockHash h = 1; h <= 20; ++h) t.enqueue(rec(h));
  }
  EXPECT_EQ(DiskTier(options()).recovery().blocks, 20);
}

TEST_F(DiskTierTest, FlippedBytesAreNeverServed) {
  {
    DiskTier t(options());
    t.enqueue(rec(1));
    t.enqueue(rec(2));
    t.flush();
  }
  {
    std::fstream f(file(1), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(kFileBytes - 10);
    f.put('\x5a');
  }
  DiskTier t(options());
  EXPECT_EQ(t.recovery().blocks, 2);  // the header is intact: found at startup...
  std::vector<std::byte> out(kPayload);
  EXPECT_FALSE(t.read(1, rec(1).tokens, out));  // ...but the checksum fails on read
  EXPECT_FALSE(t.contains(1, rec(1).tokens));
  EXPECT_FALSE(fs::exists(file(1)));
  EXPECT_EQ(t.stats().bad_files, 1);
  EXPECT_TRUE(read_back(t, 2));
}

TEST_F(DiskTierTest, TruncatedCorruptAndForeignFilesAreSkippedAndCounted) {
  {
    DiskTier t(options());
    for (kv::BlockHash h = 1; h <= 4; ++h) t.enqueue(rec(h));
    t.flush();
  }
  {  // a block of another model (another namespace), in the same directory
    DiskTier other(options(1 << 20, BlockFileLayout{0x999, kBlock, kPayload}));
    other.enqueue(rec(7));
    other.flush();
  }
  fs::resize_file(file(1), kFileBytes - 1);  // truncated
  {
    std::fstream f(file(2), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);  // inside the header: its checksum fails
    f.put('\x01');
  }
  fs::rename(file(3), file(33));  // a file whose name is not its key
  std::ofstream(dir / (".0000000000000005.kvb.tmp")) << "half a write";
  DiskTier t(options());
  const auto& r = t.recovery();
  EXPECT_EQ(r.blocks, 1);  // only block 4
  EXPECT_EQ(r.truncated, 1);
  EXPECT_EQ(r.corrupt, 2);
  EXPECT_EQ(r.foreign, 1);
  EXPECT_TRUE(t.contains(4, rec(4).tokens));
  EXPECT_FALSE(fs::exists(file(1)));
  EXPECT_FALSE(fs::exists(dir / ".0000000000000005.kvb.tmp"));
  EXPECT_TRUE(fs::exists(file(7)));  // another model's file is left for it
  EXPECT_EQ(t.stats().bad_files, 3);
}

TEST_F(DiskTierTest, TheBudgetDeletesTheLeastRecentlyUsed) {
  DiskTier t(options(3 * kFileBytes));
  for (kv::BlockHash h = 1; h <= 3; ++h) t.enqueue(rec(h));
  t.flush();
  EXPECT_TRUE(read_back(t, 1));  // 1 is now the most recent; 2 the least
  t.enqueue(rec(4));
  t.flush();
  EXPECT_EQ(t.stats().blocks, 3);
  EXPECT_EQ(t.stats().evictions, 1);
  EXPECT_FALSE(t.contains(2, rec(2).tokens));
  EXPECT_FALSE(fs::exists(file(2)));
  EXPECT_TRUE(t.contains(1, rec(1).tokens));
  EXPECT_TRUE(t.contains(4, rec(4).tokens));
}

TEST_F(DiskTierTest, ASmallerBudgetAtStartupDeletesTheOldest) {
  {
    DiskTier t(options());
    for (kv::BlockHash h = 1; h <= 4; ++h) {
      t.enqueue(rec(h));
      t.flush();  // distinct modification times, in order
      ::usleep(10000);
    }
  }
  DiskTier t(options(2 * kFileBytes));
  EXPECT_EQ(t.recovery().evicted, 2);
  EXPECT_FALSE(t.contains(1, rec(1).tokens));
  EXPECT_TRUE(t.contains(4, rec(4).tokens));
}

TEST_F(DiskTierTest, AFullQueueDropsWritesInsteadOfWaiting) {
  DiskTierOptions o = options();
  o.max_queue_bytes = 0;  // nothing fits: every write is dropped
  DiskTier t(o);
  EXPECT_FALSE(t.enqueue(rec(1)));
  EXPECT_EQ(t.stats().dropped_writes, 1);
}

TEST_F(DiskTierTest, AWriteErrorTurnsWritingOffAndKeepsWhatIsThere) {
  DiskTier t(options());
  t.enqueue(rec(1));
  t.flush();
  const fs::path moved = dir.string() + "-moved";
  fs::rename(dir, moved);  // the directory disappears under the tier
  t.enqueue(rec(2));
  t.flush();
  EXPECT_FALSE(t.stats().writable);
  EXPECT_EQ(t.stats().write_errors, 1);
  EXPECT_FALSE(t.enqueue(rec(3)));
  fs::rename(moved, dir);
  EXPECT_TRUE(read_back(t, 1));
}

TEST_F(DiskTierTest, AnUnusableDirectoryIsAClearError) {
  const std::string blocker = (fs::path(::testing::TempDir()) / "llmesh-not-a-dir").string();
  std::ofstream(blocker) << "x";
  DiskTierOptions o = options();
  o.dir = blocker + "/kv";
  try {
    DiskTier t(o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("llmesh-not-a-dir/kv"), std::string::npos) << e.what();
  }
  fs::remove(blocker);
}

TEST_F(DiskTierTest, ClearDeletesThisNamespacesFiles) {
  DiskTier t(options());
  for (kv::BlockHash h = 1; h <= 3; ++h) t.enqueue(rec(h));
  t.flush();
  EXPECT_EQ(t.clear(), 3);
  EXPECT_EQ(t.stats().blocks, 0);
  EXPECT_FALSE(fs::exists(file(2)));
}

}  // namespace
}  // namespace llmesh
