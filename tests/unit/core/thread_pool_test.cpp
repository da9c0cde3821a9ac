#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"

namespace llmesh {
namespace {

TEST(ThreadPool, RunCallsEveryThreadOnce) {
  ThreadPool pool(3);
  for (int round = 0; round < 1000; ++round) {
    std::vector<std::atomic<int>> calls(3);
    pool.run([&](int t, int n) {
      EXPECT_EQ(n, 3);
      calls[size_t(t)]++;
    });
    for (auto& c : calls) ASSERT_EQ(c.load(), 1);
  }
}

TEST(ThreadPool, ParallelForCoversRangeExactlyOnce) {
  ThreadPool pool(4);
  for (int64_t n : {0, 1, 3, 4, 5, 1000, 1001}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.parallel_for(n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) hits[size_t(i)]++;
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[size_t(i)].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(ThreadPool, SingleThreadRunsInline) {
  ThreadPool pool(1);
  int calls = 0;
  pool.run([&](int t, int n) {
    EXPECT_EQ(t, 0);
    EXPECT_EQ(n, 1);
    ++calls;
  });
  EXPECT_EQ(calls, 1);
}

TEST(Tensor, SliceAndIndex) {
  std::vector<float> data(2 * 3 * 4);
  std::iota(data.begin(), data.end(), 0.0f);
  Tensor t{"experts", DType::F32, {2, 3, 4}, data.data()};
  Tensor e1 = t.index(1);
  EXPECT_EQ(e1.shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(e1.f32()[0], 12.0f);
  Tensor rows = e1.slice_rows(1, 3);
  EXPECT_EQ(rows.rows(), 2);
  EXPECT_EQ(rows.f32()[0], 16.0f);
  EXPECT_THROW(t.index(2), Error);
  EXPECT_THROW(e1.slice_rows(2, 4), Error);
}

}  // namespace
}  // namespace llmesh
