// The pool and its lower tiers together: an evicted block is demoted with its
// exact bytes, a prefix match continues into the tiers, acquire() promotes
// the blocks back bit for bit (host first, then disk), a restart recovers
// from disk, and a block that fails its checks ends the match there.
#include "kv/kv_tiers.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kv/kv_pool.h"
#include "kv_test_util.h"

namespace llmesh {

using kv::BlockTable;
using kv::KvCacheConfig;
using kv::KvCacheManager;
using kv::KvCacheShape;
using kv::KvPool;
using kv::KvTierOptions;
using kv::KvTiers;
using kv::PrefixMatch;
using testing::toks;

namespace fs = std::filesystem;

namespace {

constexpr int64_t kBlockSize = 2, kBlocks = 4;
constexpr kv::BlockHash kNs = 0x5eed;

// One model's pool, cache manager and tiers (a "server process").
struct Stack {
  Stack(const KvTierOptions& options)
      : pool(KvCacheShape{2, 1, 8, kBlockSize, kBlocks, DType::F32}),
        kv(KvCacheConfig{kBlocks, kBlockSize, true, kNs}),
        tiers(options, pool, kv::BlockFileLayout{kNs, uint32_t(kBlockSize), uint64_t(pool.bytes_per_block())}) {
    kv.add_listener(&tiers);
    kv.set_lower_tier(&tiers);
  }
  // Runs a "step" over `tokens`: K/V derived from each token id, full blocks cached; then releases.
  void compute(const std::vector<int32_t>& tokens) {
    BlockTable t(kBlockSize);
    const PrefixMatch m = kv.find_prefix(tokens, int64_t(tokens.size()) / kBlockSize);
    kv.acquire(m, tokens, t);
    ASSERT_TRUE(kv.reserve(t, int64_t(tokens.size())));
    for (size_t b = size_t(m.num_blocks()); b < size_t(t.num_blocks()); ++b) pool.write_block(t.block_ids()[b], bytes_of(tokens, b));
    kv.cache_full_blocks(t, tokens, int64_t(tokens.size()));
    kv.release(t);
  }
  std::vector<std::byte> bytes_of(const std::vector<int32_t>& tokens, size_t block) const {
    std::vector<std::byte> out(size_t(pool.bytes_per_block()));
    for (size_t i = 0; i < out.size(); ++i) out[i] = std::byte((tokens[block * kBlockSize] * 7 + i) & 0xff);
    return out;
  }
  std::vector<std::byte> block(int32_t id) const {
    std::vector<std::byte> out(size_t(pool.bytes_per_block()));
    pool.read_block(id, out);
    return out;
  }
  KvPool pool;
  KvCacheManager kv;
  KvTiers tiers;
};

const std::vector<int32_t> kA = toks(100, 6), kB = toks(200, 8);  // 3 and 4 full blocks

TEST(KvTiers, AnEvictedPrefixComesBackFromHostRamBitForBit) {
  Stack s(KvTierOptions{1 << 20});
  s.compute(kA);
  s.compute(kB);  // needs all 4 blocks: A's 3 are evicted to the host tier
  EXPECT_EQ(s.tiers.stats().host.demotions, 3);
  EXPECT_EQ(s.tiers.stats().host.blocks, 3);

  PrefixMatch m = s.kv.find_prefix(kA, 3);
  ASSERT_EQ(m.num_blocks(), 3);
  EXPECT_EQ(m.num_resident(), 0);
  BlockTable t(kBlockSize);
  EXPECT_EQ(s.kv.acquire(m, kA, t), 3);
  for (size_t b = 0; b < 3; ++b) EXPECT_EQ(s.block(t.block_ids()[b]), s.bytes_of(kA, b)) << "block " << b;
  EXPECT_EQ(s.kv.block_counters().promoted_blocks, 3);
  EXPECT_EQ(s.tiers.stats().host.promotions, 3);
  EXPECT_EQ(s.tiers.stats().host.blocks, 3);  // exclusive: A's 3 left the tier, the 3 of B evicted for them came in
  EXPECT_FALSE(s.tiers.contains(m.hashes[0], std::span(kA).subspan(0, 2)));
  EXPECT_EQ(s.tiers.stats().restored_blocks, 3);
  EXPECT_EQ(s.tiers.stats().restored_bytes, 3 * s.pool.bytes_per_block());
  // Promoted blocks are cached again: a second lookup finds them resident.
  s.kv.release(t);
  EXPECT_EQ(s.kv.find_prefix(kA, 3).num_resident(), 3);
}

TEST(KvTiers, WithoutTiersAnEvictedPrefixIsLost) {
  KvPool pool(KvCacheShape{2, 1, 8, kBlockSize, kBlocks, DType::F32});
  KvCacheManager kv(KvCacheConfig{kBlocks, kBlockSize, true, kNs});
  BlockTable a(kBlockSize), b(kBlockSize);
  ASSERT_TRUE(kv.reserve(a, 6));
  kv.cache_full_blocks(a, kA, 6);
  kv.release(a);
  ASSERT_TRUE(kv.reserve(b, 8));
  kv.release(b);
  EXPECT_EQ(kv.find_prefix(kA, 3).num_blocks(), 0);
}

class KvTiersDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = (fs::path(::testing::TempDir()) / ("llmesh-kv-tiers-" + std::to_string(::getpid()))).string();
    fs::remove_all(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string dir;
};

TEST_F(KvTiersDisk, ARestartedStackLoadsThePrefixFromDisk) {
  {
    Stack s(KvTierOptions{0, dir, 1 << 20});
    s.compute(kA);  // written behind as soon as the blocks are cached
    s.tiers.flush();
    EXPECT_EQ(s.tiers.stats().disk.writes, 3);
  }
  Stack s(KvTierOptions{0, dir, 1 << 20});
  EXPECT_EQ(s.tiers.stats().disk_recovery.blocks, 3);
  PrefixMatch m = s.kv.find_prefix(kA, 3);
  ASSERT_EQ(m.num_blocks(), 3);
  BlockTable t(kBlockSize);
  EXPECT_EQ(s.kv.acquire(m, kA, t), 3);
  for (size_t b = 0; b < 3; ++b) EXPECT_EQ(s.block(t.block_ids()[b]), s.bytes_of(kA, b));
  EXPECT_EQ(s.tiers.stats().disk_promotions, 3);
  s.kv.release(t);
  s.tiers.flush();
  EXPECT_EQ(s.tiers.stats().disk.writes, 0);  // promoted blocks are on disk already
  // A different continuation after the shared 2 blocks still reuses them.
  std::vector<int32_t> other = toks(100, 4);
  other.push_back(7), other.push_back(8);
  EXPECT_EQ(s.kv.find_prefix(other, 3).num_blocks(), 2);
}

TEST_F(KvTiersDisk, ABlockThatFailsItsChecksEndsTheMatchThere) {
  {
    Stack s(KvTierOptions{0, dir, 1 << 20});
    s.compute(kA);
  }
  // Corrupt the second block's payload.
  const kv::BlockHash h0 = kv::hash_block(kNs, std::span(kA).subspan(0, 2));
  const kv::BlockHash h1 = kv::hash_block(h0, std::span(kA).subspan(2, 2));
  {
    std::fstream f(dir + "/" + kv::block_file_name(h1), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-1, std::ios::end);
    f.put('\x77');
  }
  Stack s(KvTierOptions{0, dir, 1 << 20});
  PrefixMatch m = s.kv.find_prefix(kA, 3);
  EXPECT_EQ(m.num_blocks(), 3);  // the index trusts headers...
  BlockTable t(kBlockSize);
  EXPECT_EQ(s.kv.acquire(m, kA, t), 1);  // ...the load does not: only block 0 is served
  EXPECT_EQ(s.block(t.block_ids()[0]), s.bytes_of(kA, 0));
  EXPECT_EQ(s.kv.block_counters().failed_promotions, 1);
  EXPECT_EQ(s.tiers.stats().disk.bad_files, 1);
  EXPECT_EQ(s.kv.num_free_blocks(), kBlocks - 1);  // nothing leaked
  s.kv.release(t);
  EXPECT_EQ(s.kv.find_prefix(kA, 3).num_blocks(), 1);
}

TEST_F(KvTiersDisk, ClearEmptiesBothTiers) {
  Stack s(KvTierOptions{1 << 20, dir, 1 << 20});
  s.compute(kA);
  s.compute(kB);
  s.tiers.flush();
  EXPECT_GT(s.tiers.stats().host.blocks, 0);
  EXPECT_EQ(s.tiers.clear(), 3 + 7);  // host: A's 3; disk: A's 3 and B's 4
  EXPECT_EQ(s.tiers.stats().disk.blocks, 0);
  s.kv.flush();
  EXPECT_EQ(s.kv.find_prefix(kA, 3).num_blocks(), 0);
}

TEST_F(KvTiersDisk, AnUnusableDirectoryLeavesTheDiskTierOff) {
  std::ofstream(dir) << "a file, not a directory";
  Stack s(KvTierOptions{1 << 20, dir + "/kv", 1 << 20});
  EXPECT_FALSE(s.tiers.has_disk());
  s.compute(kA);  // still caches (host tier)
  s.compute(kB);
  EXPECT_EQ(s.kv.find_prefix(kA, 3).num_blocks(), 3);
  fs::remove(dir);
}

}  // namespace
}  // namespace llmesh
