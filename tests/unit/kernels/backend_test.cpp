// The CPU backend object: what supports() admits, its buffers, the batched row
// ops against naive loops, the best kernels against the reference backend, and
// ops called from two threads at once.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <thread>

#include "kernels/cpu/cpu_backend.h"
#include "kernel_test_util.h"

namespace llmesh::kernels {
namespace {

using testing::nmse;
using testing::random_floats;


TEST(CpuBackend, SupportsEveryWeightDtypeForMatmulKvDtypesForAttentionAndF32Elsewhere) {
  ThreadPool pool(1);
  CpuBackend cpu(pool);
  EXPECT_EQ(cpu.device(), Device::Cpu);
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    EXPECT_TRUE(cpu.supports(Op::Matmul, dtype));
    EXPECT_TRUE(cpu.supports(Op::GatherRows, dtype));
    for (Op op : {Op::CopyRows, Op::ScatterAddRows, Op::Fill, Op::Rmsnorm, Op::SiluMul, Op::Softmax, Op::Add,
                  Op::Rope}) {
      EXPECT_EQ(cpu.supports(op, dtype), dtype == DType::F32) << op_name(op);
    }
    // The KV pool's dtypes (--kv-cache-dtype).
    const bool kv = dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::Q8_0;
    EXPECT_EQ(cpu.supports(Op::PagedAttention, dtype), kv);
    EXPECT_EQ(cpu.supports(Op::StoreKv, dtype), kv);
  }
  // The reference backend runs the same set.
  CpuBackend ref(pool, reference_cpu_kernels());
  for (int op = 0; op < kNumOps; ++op)
    for (DType dtype : kAllDTypes) EXPECT_EQ(ref.supports(Op(op), dtype), cpu.supports(Op(op), dtype));
}

TEST(CpuBackend, NameFollowsTheChosenKernels) {
  ThreadPool pool(1);
  EXPECT_EQ(std::string_view(CpuBackend(pool).name()), std::string("cpu/") + backend_name());
  EXPECT_STREQ(CpuBackend(pool, reference_cpu_kernels()).name(), "cpu/ref");
  EXPECT_STREQ(reference_cpu_kernels().name, "ref");
}

TEST(CpuBackend, BuffersAreAlignedOwnedAndMovable) {
  ThreadPool pool(1);
  CpuBackend cpu(pool);
  Buffer a = cpu.allocate(1000);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a.num_bytes(), 1000u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % kBufferAlignment, 0u);
  EXPECT_EQ(a.owner(), &cpu);
  std::memset(a.data(), 0x5a, a.num_bytes());  // writable end to end
  void* data = a.data();
  Buffer b = std::move(a);
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(b.data(), data);
  b.reset();
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(cpu.allocate(0).empty());
}

TEST(CpuBackend, RowOpsMatchNaiveLoops) {
  ThreadPool pool(1);
  CpuBackend cpu(pool);
  const int64_t dim = 37, rows = 5;
  // gather_rows: an f16 table, dequantized row by row.
  std::vector<uint16_t> table(size_t(rows * dim));
  const std::vector<float> values = random_floats(table.size(), 1);
  for (size_t i = 0; i < table.size(); ++i) table[i] = f32_to_f16(values[i]);
  const Tensor t{"embd", DType::F16, {rows, dim}, table.data()};
  const int32_t ids[3] = {4, 0, 4};
  std::vector<float> got(size_t(3 * dim)), want(size_t(3 * dim));
  cpu.gather_rows(t, ids, 3, got.data());
  for (int i = 0; i < 3; ++i) dequantize_row(DType::F16, t.row(ids[i]), want.data() + i * dim, dim);
  EXPECT_EQ(got, want);

  // copy_rows, then scatter_add_rows back with weights.
  const std::vector<float> src = random_floats(size_t(rows * dim), 2);
  cpu.copy_rows(src.data(), dim, ids, 3, got.data());
  for (int i = 0; i < 3; ++i)
    for (int64_t j = 0; j < dim; ++j) ASSERT_EQ(got[size_t(i * dim + j)], src[size_t(ids[i] * dim + j)]);
  std::vector<float> dst(src.size(), 1.0f), want_dst(src.size(), 1.0f);
  const float scales[3] = {0.5f, 2.0f, -1.0f};
  cpu.scatter_add_rows(got.data(), dim, ids, scales, 3, dst.data());
  for (int i = 0; i < 3; ++i)
    for (int64_t j = 0; j < dim; ++j) want_dst[size_t(ids[i] * dim + j)] += scales[i] * got[size_t(i * dim + j)];
  EXPECT_EQ(dst, want_dst);

  cpu.fill(dst.data(), -2.5f, int64_t(dst.size()));
  for (float v : dst) ASSERT_EQ(v, -2.5f);

  // add_bias: every row.
  std::vector<float> y = random_floats(size_t(rows * dim), 3), want_y = y;
  const std::vector<float> bias = random_floats(size_t(dim), 4);
  cpu.add_bias(y.data(), bias.data(), rows, dim);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < dim; ++j) want_y[size_t(r * dim + j)] += bias[size_t(j)];
  EXPECT_EQ(y, want_y);

  // softmax_inplace: each row sums to one on its own.
  std::vector<float> logits = random_floats(size_t(rows * dim), 5, -30.0f, 30.0f);
  cpu.softmax_inplace(logits.data(), rows, dim);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t j = 0; j < dim; ++j) sum += logits[size_t(r * dim + j)];
    EXPECT_NEAR(sum, 1.0, 1e-5) << r;
  }
}

TEST(CpuBackend, BestKernelsMatchReferenceBackend) {
  ThreadPool pool(2);
  CpuBackend best(pool), ref(pool, reference_cpu_kernels());
  const int64_t rows = 3, dim = 1027;
  const std::vector<float> x = random_floats(size_t(rows * dim), 6, -3.0f, 3.0f);
  const std::vector<float> weight = random_floats(size_t(dim), 7, 0.5f, 1.5f);
  std::vector<float> a(x.size()), b(x.size());
  best.rmsnorm(x.data(), weight.data(), a.data(), rows, dim, 1e-6f);
  ref.rmsnorm(x.data(), weight.data(), b.data(), rows, dim, 1e-6f);
  EXPECT_LT(nmse(a.data(), b.data(), a.size()), 1e-12);
  a = x, b = x;
  best.softmax_inplace(a.data(), rows, dim);
  ref.softmax_inplace(b.data(), rows, dim);
  EXPECT_LT(nmse(a.data(), b.data(), a.size()), 1e-12);
  a = x, b = x;
  best.add_bias(a.data(), weight.data(), rows, dim);
  ref.add_bias(b.data(), weight.data(), rows, dim);
  EXPECT_EQ(a, b);
  const std::vector<float> up = random_floats(x.size(), 8);
  best.silu_mul(x.data(), up.data(), a.data(), int64_t(x.size()));
  ref.silu_mul(x.data(), up.data(), b.data(), int64_t(x.size()));
  EXPECT_LT(nmse(a.data(), b.data(), a.size()), 1e-12);
}

// Two threads running parallel ops on one backend at once (two micro-batches) get
// exactly what each gets alone.
TEST(CpuBackend, ConcurrentCallersGetSequentialResults) {
  ThreadPool pool(2);
  CpuBackend cpu(pool);
  const int64_t out = 257, in = 512, tokens = 3;
  const std::vector<float> w_values = random_floats(size_t(out * in), 9);
  const Tensor w{"w", DType::F32, {out, in}, w_values.data()};
  const std::vector<float> x1 = random_floats(size_t(tokens * in), 10), x2 = random_floats(size_t(tokens * in), 11);
  std::vector<float> want1(size_t(tokens * out)), want2(want1.size());
  cpu.matmul(w, x1.data(), want1.data(), tokens);
  cpu.matmul(w, x2.data(), want2.data(), tokens);
  bool all_equal1 = true, all_equal2 = true;
  auto worker = [&](const std::vector<float>& x, const std::vector<float>& want, bool& all_equal) {
    std::vector<float> y(want.size());
    for (int i = 0; i < 200; ++i) {
      cpu.matmul(w, x.data(), y.data(), tokens);
      all_equal = all_equal && y == want;
    }
  };
  std::thread t1(worker, std::cref(x1), std::cref(want1), std::ref(all_equal1));
  std::thread t2(worker, std::cref(x2), std::cref(want2), std::ref(all_equal2));
  t1.join();
  t2.join();
  EXPECT_TRUE(all_equal1);
  EXPECT_TRUE(all_equal2);
}

}  // namespace
}  // namespace llmesh::kernels
