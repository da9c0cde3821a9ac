// Paged attention against a naive attention over contiguous K/V kept by the test.
// The pool's block tables are shuffled and non-contiguous, several sequences share
// one flattened batch (a prefill chunk, decodes, a first token), with GQA 1:1, 2:1 and 4:1,
// with and without a sliding window, with and without attention sinks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include <functional>

#include <fmt/format.h>

#include "kernels/cpu/avx2_ops.h"
#include "kernels/cpu/avx512_ops.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/ops.h"
#include "kernels/ref/ref_ops.h"
#include "kernel_test_util.h"

namespace llmesh::kernels {
namespace {

struct AttentionCase {
  int64_t num_heads, num_kv_heads, head_dim, block_size;
  // > 0: multi-head latent attention's pool, whose values are the first value_dim dims of the K rows.
  int64_t value_dim = 0;
  int64_t window = 0;  // > 0: each query sees its last `window` positions (KvLayerView::window)
  bool sinks = false;  // a per-head sink logit in each softmax's denominator (gpt-oss)

  bool latent() const { return value_dim > 0; }
  int64_t v_dim() const { return latent() ? value_dim : head_dim; }
};

// One sequence: its K/V laid out contiguously [length, num_kv_heads, head_dim], and its blocks.
struct TestSequence {
  int64_t length;
  std::vector<float> k, v;
  std::vector<int32_t> block_table;
};

// The first position a query at `pos` sees: 0, or under a window w the first of its last w.
int64_t window_start(int64_t pos, int64_t window) { return window > 0 ? std::max<int64_t>(0, pos - window + 1) : 0; }

// Naive attention of one query over positions window_start..pos of seq, written straight from the definition.
void naive_attention(const float* q, const TestSequence& seq, int64_t pos, const AttentionCase& c, float scale,
                     const float* sinks, float* out) {
  const int64_t group = c.num_heads / c.num_kv_heads;
  const int64_t first = window_start(pos, c.window);
  for (int64_t h = 0; h < c.num_heads; ++h) {
    const int64_t kv_head = h / group;
    std::vector<double> weights(size_t(pos + 1), -INFINITY);  // exp(-inf) = 0 outside the window
    for (int64_t j = first; j <= pos; ++j) {
      double dot = 0.0;
      for (int64_t d = 0; d < c.head_dim; ++d)
        dot += double(q[h * c.head_dim + d]) * seq.k[size_t((j * c.num_kv_heads + kv_head) * c.head_dim + d)];
      weights[size_t(j)] = dot * scale;
    }
    // A sink: one more logit, with no value.
    if (sinks != nullptr) weights.push_back(sinks[h]);
    const double max_w = *std::max_element(weights.begin(), weights.end());
    double sum = 0.0;
    for (double& w : weights) sum += w = std::exp(w - max_w);
    const std::vector<float>& values = c.latent() ? seq.k : seq.v;  // rows of head_dim either way
    for (int64_t d = 0; d < c.v_dim(); ++d) {
      double acc = 0.0;
      for (int64_t j = 0; j <= pos; ++j)
        acc += weights[size_t(j)] * values[size_t((j * c.num_kv_heads + kv_head) * c.head_dim + d)];
      out[h * c.v_dim() + d] = float(acc / sum);
    }
  }
}

// Values the pool holds exactly in `dtype`: each head row rounded through the format, so the
// naive attention over them is what attention over the pool must give.
std::vector<float> representable(std::vector<float> x, DType dtype, int64_t head_dim) {
  if (dtype == DType::F32) return x;
  std::vector<uint8_t> row(dtype_row_bytes(dtype, head_dim));
  for (size_t i = 0; i < x.size(); i += size_t(head_dim)) {
    if (dtype == DType::Q8_0) {
      quantize_row_q8_0(x.data() + i, reinterpret_cast<BlockQ8_0*>(row.data()), head_dim);
      dequantize_row(dtype, row.data(), x.data() + i, head_dim);
    }
    for (int64_t d = 0; d < head_dim; ++d) {
      float& v = x[i + size_t(d)];
      if (dtype == DType::F16) v = f16_to_f32(f32_to_f16(v));
      if (dtype == DType::BF16) v = bf16_to_f32(f32_to_bf16(v));
    }
  }
  return x;
}

void run_case(const AttentionCase& c, DType dtype = DType::F32) {
  SCOPED_TRACE(fmt::format("heads={} kv_heads={} head_dim={} block_size={} value_dim={} window={} sinks={} kv dtype {}",
                           c.num_heads, c.num_kv_heads, c.head_dim, c.block_size, c.value_dim, c.window, c.sinks,
                           dtype_name(dtype)));
  const int64_t lengths[] = {70, 1, 40, 17};
  int64_t num_blocks = 3;  // spare blocks nobody uses: garbage there must not leak in
  for (int64_t len : lengths) num_blocks += (len + c.block_size - 1) / c.block_size;
  const int64_t slot_floats = c.num_kv_heads * c.head_dim;
  // The pool starts as all-ones bytes, NaN in every KV dtype (an f16/bf16 NaN, a NaN q8_0 scale):
  // reading any slot that was not written poisons the result.
  const size_t pool_bytes = size_t(num_blocks * c.block_size * c.num_kv_heads) * dtype_row_bytes(dtype, c.head_dim);
  std::vector<uint8_t> k_pool(pool_bytes, 0xff), v_pool(pool_bytes, 0xff);
  const KvLayerView kv{k_pool.data(), c.latent() ? k_pool.data() : v_pool.data(), c.block_size, c.num_kv_heads,
                       c.head_dim, dtype, c.value_dim, c.window};

  std::vector<int32_t> block_ids(static_cast<size_t>(num_blocks));
  std::iota(block_ids.begin(), block_ids.end(), 0);
  std::shuffle(block_ids.begin(), block_ids.end(), std::mt19937(uint32_t(c.head_dim + c.block_size)));
  std::vector<TestSequence> seqs;
  size_t next_block = 0;
  for (int64_t len : lengths) {
    TestSequence s{len,
                   representable(testing::random_floats(size_t(len * slot_floats), uint32_t(len)), dtype, c.head_dim),
                   representable(testing::random_floats(size_t(len * slot_floats), uint32_t(len + 1000)), dtype,
                                 c.head_dim),
                   {}};
    for (int64_t b = 0; b < (len + c.block_size - 1) / c.block_size; ++b) s.block_table.push_back(block_ids[next_block++]);
    // Write every position through store_kv, one sequence per call.
    std::vector<int64_t> slots(static_cast<size_t>(len));
    for (int64_t p = 0; p < len; ++p)
      slots[size_t(p)] = int64_t(s.block_table[size_t(p / c.block_size)]) * c.block_size + p % c.block_size;
    best_cpu_kernels().store_kv(s.k.data(), c.latent() ? nullptr : s.v.data(), slots.data(), len, kv);
    seqs.push_back(std::move(s));
  }

  // The flattened batch: seq 0 a prefill chunk (positions 30..69), seq 1 its first token,
  // seq 2 a decode at its last position, seq 3 a chunk (positions 5..16) — interleaved order.
  std::vector<int32_t> seq_index, positions;
  for (int32_t p = 30; p < 70; ++p) seq_index.push_back(0), positions.push_back(p);
  seq_index.push_back(1), positions.push_back(0);
  seq_index.push_back(2), positions.push_back(39);
  for (int32_t p = 5; p < 17; ++p) seq_index.push_back(3), positions.push_back(p);
  const int64_t num_tokens = int64_t(positions.size());
  // Under a window, the blocks that lie wholly before the window of a sequence's earliest query
  // in the batch are never read (they could be freed): poison them as the unwritten ones are.
  for (size_t s = 0; s < seqs.size(); ++s) {
    int64_t earliest = seqs[s].length;
    for (int64_t t = 0; t < num_tokens; ++t)
      if (seq_index[size_t(t)] == int32_t(s)) earliest = std::min<int64_t>(earliest, positions[size_t(t)]);
    const int64_t num_unread_blocks = window_start(earliest, c.window) / c.block_size;
    const size_t block_bytes = size_t(c.block_size) * kv.slot_bytes();
    for (int64_t b = 0; b < num_unread_blocks; ++b) {
      const size_t offset = size_t(seqs[s].block_table[size_t(b)]) * block_bytes;
      std::fill_n(k_pool.begin() + ptrdiff_t(offset), block_bytes, uint8_t(0xff));
      std::fill_n(v_pool.begin() + ptrdiff_t(offset), block_bytes, uint8_t(0xff));
    }
  }
  std::vector<const int32_t*> tables;
  for (const TestSequence& s : seqs) tables.push_back(s.block_table.data());
  const AttentionBatch batch{num_tokens, positions.data(), seq_index.data(), tables.data()};

  const size_t q_floats = size_t(num_tokens * c.num_heads * c.head_dim);
  const size_t out_floats = size_t(num_tokens * c.num_heads * c.v_dim());
  const std::vector<float> q = testing::random_floats(q_floats, 77, -2.0f, 2.0f);
  const float scale = 1.0f / std::sqrt(float(c.head_dim));
  // Sinks around the scores' range, so that they take anywhere from little to most of the mass.
  const std::vector<float> sink_values = testing::random_floats(size_t(c.num_heads), 78, -3.0f, 3.0f);
  const float* sinks = c.sinks ? sink_values.data() : nullptr;
  std::vector<float> expected(out_floats);
  for (int64_t t = 0; t < num_tokens; ++t)
    naive_attention(q.data() + t * c.num_heads * c.head_dim, seqs[size_t(seq_index[size_t(t)])],
                    positions[size_t(t)], c, scale, sinks, expected.data() + t * c.num_heads * c.v_dim());

  ThreadPool pool(2);
  using AttentionFn = std::function<void(const float*, float*, const AttentionBatch&, const KvLayerView&, int64_t,
                                         float, const float*, ThreadPool&)>;
  CpuBackend cpu(pool);
  const AttentionFn backend_attention = [&](const float* q, float* out, const AttentionBatch& b,
                                            const KvLayerView& kv, int64_t heads, float scale, const float* sinks,
                                            ThreadPool&) { cpu.paged_attention(q, out, b, kv, heads, scale, sinks); };
  std::vector<std::pair<const char*, AttentionFn>> impls = {{"ref", ref::paged_attention},
                                                            {"cpu backend", backend_attention}};
  if (cpu::has_avx512_kernels()) impls.push_back({"avx512", avx512::paged_attention});
  if (cpu::has_avx2_kernels()) impls.push_back({"avx2", avx2::paged_attention});
  for (auto [name, fn] : impls) {
    SCOPED_TRACE(name);
    testing::GuardedOutput out(out_floats);
    fn(q.data(), out.data(), batch, kv, c.num_heads, scale, sinks, pool);
    EXPECT_LT(testing::nmse(out.data(), expected.data(), out_floats), 1e-10);
    EXPECT_TRUE(out.guard_intact());
  }
}

TEST(PagedAttention, MatchesNaiveAttention) {
  const AttentionCase cases[] = {
      {4, 4, 64, 16},    // multi-head
      {8, 4, 128, 16},   // GQA 2:1, Qwen3-like head_dim
      {16, 4, 64, 5},    // GQA 4:1, block size not a power of two
      {8, 2, 128, 32},   // GQA 4:1
      {4, 2, 48, 16},    // head_dim with no fast kernel: falls back to the reference
      {6, 2, 80, 16},    // GQA 3:1; head_dim 80 and 96: 5 and 6 blocks of 16 dimensions
      {4, 1, 96, 8},
      {2, 1, 256, 7},
      {32, 1, 64, 16},   // a group wider than one 16-query tile
  };
  for (const AttentionCase& c : cases) run_case(c);
}

// The same over f16, bf16 and q8_0 pools: every kernel converts the pool's rows exactly.
TEST(PagedAttention, ReadsEveryKvDtype) {
  const AttentionCase cases[] = {{8, 4, 128, 16}, {16, 4, 64, 5}, {4, 2, 96, 16}, {4, 1, 96, 16, 64}};
  for (DType dtype : {DType::F16, DType::BF16, DType::Q8_0})
    for (const AttentionCase& c : cases) run_case(c, dtype);
}

// Sliding windows shorter than, equal to and longer than the sequences (70, 1, 40 and 17 positions;
// the batch's queries: 30..69, 0, 39, 5..16), over block sizes that divide the window and that do not.
TEST(PagedAttention, SlidingWindow) {
  const AttentionCase cases[] = {
      {8, 4, 128, 16, 0, 16},   // GQA 2:1, the window one block
      {8, 4, 128, 16, 0, 19},   // a block size that does not divide it
      {16, 4, 64, 5, 0, 10},    // GQA 4:1, two blocks of 5
      {16, 4, 64, 5, 0, 12},
      {4, 4, 64, 16, 0, 1},     // each query sees itself only
      {8, 2, 128, 32, 0, 40},   // as long as seq 2, shorter than seq 0
      {6, 2, 80, 16, 0, 70},    // as long as the longest sequence: full attention
      {4, 1, 96, 8, 0, 1000},   // longer than every sequence
      {32, 1, 64, 16, 0, 24},   // a group wider than one 16-query tile
      {2, 1, 256, 7, 0, 30},
      {4, 2, 48, 16, 0, 9},     // no fast kernel: the reference
      {4, 1, 96, 16, 64, 20},   // values inside the key rows
  };
  for (const AttentionCase& c : cases) run_case(c);
  const AttentionCase dtype_cases[] = {{8, 4, 128, 16, 0, 19}, {16, 4, 64, 5, 0, 12}, {4, 2, 96, 16, 0, 16},
                                       {4, 1, 96, 16, 64, 20}};
  for (DType dtype : {DType::F16, DType::BF16, DType::Q8_0})
    for (const AttentionCase& c : dtype_cases) run_case(c, dtype);
}

// Multi-head latent attention: one row [latent | rotary key] per position serves as every head's
// key, and its latent part as the values (v == k), so the output has value_dim dims per head.
TEST(PagedAttention, ValuesInsideTheKeyRows) {
  const AttentionCase cases[] = {
      {4, 1, 96, 16, 64},     // the tiny DeepSeek model: a fast kernel
      {16, 1, 576, 16, 512},  // DeepSeek V3 / Kimi K2: a fast kernel, a full 16-head tile
      {20, 1, 576, 16, 512},  // and a partial one
      {4, 1, 80, 5, 48},      // no fast kernel: the reference
  };
  for (const AttentionCase& c : cases) run_case(c);
}

// gpt-oss's attention sinks: with full attention and gpt-oss's alternating window (its head_dim 64,
// GQA 8:1), on the fast kernels and the reference, on every KV dtype.
TEST(PagedAttention, AttentionSinks) {
  const AttentionCase cases[] = {
      {16, 2, 64, 16, 0, 0, true},   // gpt-oss's full layers (64 heads / 8 kv heads, at tiny scale)
      {16, 2, 64, 16, 0, 12, true},  // its windowed layers
      {8, 4, 128, 5, 0, 0, true},
      {32, 1, 64, 16, 0, 24, true},  // a group wider than one tile
      {4, 2, 48, 16, 0, 9, true},    // no fast kernel: the reference
  };
  for (const AttentionCase& c : cases) run_case(c);
  for (DType dtype : {DType::F16, DType::BF16, DType::Q8_0}) run_case(cases[1], dtype);
}

TEST(StoreKv, RoundsIntoEveryKvDtype) {
  const int64_t head_dim = 64, num_kv_heads = 2;
  std::vector<float> k = testing::random_floats(size_t(num_kv_heads * head_dim), 5, -3.0f, 3.0f);
  k[3] = 1e6f;  // past f16's range: stored as its largest finite value, not inf
  std::vector<float> v = testing::random_floats(k.size(), 6);
  const int64_t slot = 1;
  ThreadPool pool(1);
  for (DType dtype : {DType::F32, DType::F16, DType::BF16, DType::Q8_0}) {
    SCOPED_TRACE(dtype_name(dtype));
    std::vector<uint8_t> k_pool(2 * num_kv_heads * dtype_row_bytes(dtype, head_dim)), v_pool(k_pool.size());
    const KvLayerView kv{k_pool.data(), v_pool.data(), 2, num_kv_heads, head_dim, dtype};
    CpuBackend(pool).store_kv(k.data(), v.data(), &slot, 1, kv);
    for (int64_t h = 0; h < num_kv_heads; ++h) {
      std::vector<float> got(static_cast<size_t>(head_dim));
      dequantize_row(dtype, kv.k_row(slot, h), got.data(), head_dim);
      for (int64_t d = 0; d < head_dim; ++d) {
        const float want = k[size_t(h * head_dim + d)];
        const float expected = dtype == DType::F16 ? f16_to_f32(f32_to_f16(std::min(want, 65504.0f)))
                               : dtype == DType::BF16 ? bf16_to_f32(f32_to_bf16(want))
                                                      : want;
        if (dtype == DType::Q8_0)  // within half a quantization step of its block
          EXPECT_NEAR(got[size_t(d)], want, (h == 0 && d < 32 ? 1e6f : 3.0f) / 127.0f * 0.5f + 1e-3f);
        else
          EXPECT_EQ(got[size_t(d)], expected) << "k[" << h << "][" << d << "]";
      }
    }
  }
}

TEST(StoreKv, WritesSlotsAndSkipsNegative) {
  // 2 blocks of 2 slots, 1 kv head of 4 floats: slot s lives at floats [4s, 4s + 4).
  std::vector<float> k_pool(16, 0.0f), v_pool(16, 0.0f);
  const KvLayerView kv{k_pool.data(), v_pool.data(), 2, 1, 4};
  const float k_new[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const float v_new[12] = {-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12};
  const int64_t slots[3] = {3, -1, 0};  // block 1 offset 1; padding; block 0 offset 0
  ThreadPool pool(1);
  CpuBackend(pool).store_kv(k_new, v_new, slots, 3, kv);
  const std::vector<float> want_k = {9, 10, 11, 12, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4};
  const std::vector<float> want_v = {-9, -10, -11, -12, 0, 0, 0, 0, 0, 0, 0, 0, -1, -2, -3, -4};
  EXPECT_EQ(k_pool, want_k);
  EXPECT_EQ(v_pool, want_v);
}

}  // namespace
}  // namespace llmesh::kernels
