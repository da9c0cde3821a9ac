// Model::forward on tiny random-weight models written in memory: reentrancy
// (two threads, one model, separate workspaces and KV pools, logits identical
// to sequential runs), workspace growth, the reference backend against the
// fast one, and refusing at load what a backend does not support.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>

#include "core/error.h"
#include "format_writers.h"
#include "kernels/cpu/cpu_backend.h"
#include "model/model.h"
#include "model/model_files.h"

namespace llmesh {

using kv::KvCacheShape;
using kv::KvPool;
using model::create_model;
using model::Model;
using model::ModelConfig;
using model::ModelFiles;
using model::open_model;
using model::StepInput;
using model::StepShape;
using model::Workspace;

namespace {

using test::TinySpec;

constexpr int64_t kBlockSize = 4;
constexpr int64_t kNumBlocks = 16;

// A step: a flattened batch and how many logit rows it asks for.
// Each sequence is (first block id, token ids, first position); its blocks are consecutive ids.
struct SeqChunk {
  int32_t first_block;
  std::vector<int32_t> tokens;
  int32_t begin;
  bool logits;
};

StepInput make_step(const std::vector<SeqChunk>& chunks) {
  StepInput in;
  for (size_t s = 0; s < chunks.size(); ++s) {
    const SeqChunk& c = chunks[s];
    const int32_t end = c.begin + int32_t(c.tokens.size());
    std::vector<int32_t> blocks;
    for (int32_t b = 0; b * kBlockSize < end; ++b) blocks.push_back(c.first_block + b);
    in.add_sequence(blocks);
    for (size_t i = 0; i < c.tokens.size(); ++i) {
      const int32_t p = c.begin + int32_t(i);
      in.token_ids.push_back(c.tokens[i]);
      in.positions.push_back(p);
      in.seq_index.push_back(int32_t(s));
      in.slot_mapping.push_back(int64_t(blocks[size_t(p / kBlockSize)]) * kBlockSize + p % kBlockSize);
    }
    if (c.logits) in.logits_indices.push_back(int32_t(in.token_ids.size() - 1));
  }
  return in;
}

// Two scripts of steps, different in shape and tokens: prefill of two sequences at once, then
// their decodes; a chunked prefill of one sequence, then decodes.
std::vector<StepInput> script_a() {
  return {make_step({{0, {1, 2, 3, 4, 5, 6}, 0, true}, {4, {7, 8, 9}, 0, true}}),
          make_step({{0, {11}, 6, true}, {4, {12}, 3, true}}),
          make_step({{0, {13}, 7, true}, {4, {14}, 4, true}})};
}
std::vector<StepInput> script_b() {
  return {make_step({{2, {20, 21, 22, 23}, 0, false}}), make_step({{2, {24, 25, 26}, 4, true}}),
          make_step({{2, {27}, 7, true}}), make_step({{2, {28}, 8, true}})};
}

KvCacheShape kv_shape(const ModelConfig& c) {
  return model::kv_cache_shape(c, kBlockSize, kNumBlocks, kv::kDefaultKvDtype);
}

// Runs a script on a fresh KV pool; returns every step's logits, concatenated.
std::vector<float> run_script(const Model& model, const std::vector<StepInput>& steps, Workspace& ws) {
  KvPool kv(kv_shape(model.config()));
  std::vector<float> all;
  for (const StepInput& step : steps) {
    std::vector<float> logits(step.logits_indices.size() * size_t(model.config().vocab_size));
    model.forward(step, kv, ws, logits.data());
    all.insert(all.end(), logits.begin(), logits.end());
  }
  return all;
}

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

double nmse(const std::vector<float>& a, const std::vector<float>& b) {
  double err = 0, ref = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    err += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    ref += double(b[i]) * b[i];
  }
  return err / ref;
}

TinySpec spec_of(const std::string& arch) {
  TinySpec s;
  s.arch = arch;
  if (arch == "qwen3moe") s.experts = 4, s.experts_used = 2, s.moe_ffn = 32;
  return s;
}

// Opens a tiny random-weight model of `arch` written to the build tree.
ModelFiles open_tiny(const std::string& arch) {
  const auto dir = test::fresh_dir("forward_" + arch);
  test::write_file(dir / "tiny.gguf", test::tiny_gguf_writer(spec_of(arch), test::kGgmlF32, 7).build());
  return open_model((dir / "tiny.gguf").string());
}

const char* const kArchs[] = {"qwen3", "qwen2", "llama", "qwen3moe"};

TEST(Forward, TwoThreadsOnOneModelMatchSequentialRuns) {
  for (const char* arch : kArchs) {
    SCOPED_TRACE(arch);
    const ModelFiles files = open_tiny(arch);
    ThreadPool pool(2);
    const std::unique_ptr<Model> model = create_model(files, pool);

    auto ws = model->make_workspace({});
    const std::vector<float> want_a = run_script(*model, script_a(), *ws);
    const std::vector<float> want_b = run_script(*model, script_b(), *ws);
    const int64_t vocab = files.config.vocab_size;
    ASSERT_EQ(want_a.size(), 6 * size_t(vocab));
    for (float v : want_a) ASSERT_TRUE(std::isfinite(v));
    // The two sequences' logits differ: the model computes something.
    EXPECT_GT(nmse(std::vector<float>(want_a.begin(), want_a.begin() + vocab),
                   std::vector<float>(want_a.begin() + vocab, want_a.begin() + 2 * vocab)),
              1e-3);

    constexpr int kRepeats = 20;
    std::vector<std::vector<float>> got_a(kRepeats), got_b(kRepeats);
    auto worker = [&](const std::vector<StepInput>& script, std::vector<std::vector<float>>& out) {
      auto my_ws = model->make_workspace({8, 2});
      for (int r = 0; r < kRepeats; ++r) out[size_t(r)] = run_script(*model, script, *my_ws);
    };
    const std::vector<StepInput> a = script_a(), b = script_b();
    std::thread ta(worker, std::cref(a), std::ref(got_a));
    std::thread tb(worker, std::cref(b), std::ref(got_b));
    ta.join();
    tb.join();
    for (int r = 0; r < kRepeats; ++r) {
      EXPECT_TRUE(bitwise_equal(got_a[size_t(r)], want_a)) << "thread a, repeat " << r;
      EXPECT_TRUE(bitwise_equal(got_b[size_t(r)], want_b)) << "thread b, repeat " << r;
    }
  }
}

TEST(Forward, WorkspaceGrowsOnlyForBiggerSteps) {
  const ModelFiles files = open_tiny("qwen3moe");
  ThreadPool pool(1);
  const std::unique_ptr<Model> model = create_model(files, pool);
  auto small = model->make_workspace({1, 1});
  auto big = model->make_workspace({64, 8});
  const size_t big_bytes = big->num_bytes();
  EXPECT_EQ(big->capacity().max_tokens, 64);
  EXPECT_EQ(big->capacity().max_logits, 8);
  // Same logits whether the workspace had to grow or not.
  EXPECT_TRUE(bitwise_equal(run_script(*model, script_a(), *small), run_script(*model, script_a(), *big)));
  EXPECT_EQ(big->num_bytes(), big_bytes);  // fitted: never reallocated
  EXPECT_GE(small->capacity().max_tokens, 9);
  EXPECT_GE(small->capacity().max_logits, 2);
  // The steady state: the same steps again allocate nothing.
  const size_t grown_bytes = small->num_bytes();
  const StepShape grown = small->capacity();
  run_script(*model, script_a(), *small);
  run_script(*model, script_b(), *small);
  EXPECT_EQ(small->num_bytes(), grown_bytes);
  EXPECT_EQ(small->capacity().max_tokens, grown.max_tokens);
  EXPECT_EQ(small->capacity().max_logits, grown.max_logits);
}

TEST(Forward, RejectsAWorkspaceOfAnotherModel) {
  const ModelFiles dense = open_tiny("qwen3"), moe = open_tiny("qwen3moe");
  ThreadPool pool(1);
  const std::unique_ptr<Model> a = create_model(dense, pool), b = create_model(moe, pool);
  auto ws_b = b->make_workspace({});
  Workspace empty;
  const StepInput step = make_step({{0, {1, 2}, 0, true}});
  KvPool kv(kv_shape(a->config()));
  std::vector<float> logits(size_t(a->config().vocab_size));
  EXPECT_THROW(a->forward(step, kv, *ws_b, logits.data()), Error);
  EXPECT_THROW(a->forward(step, kv, empty, logits.data()), Error);
}

TEST(Forward, ReferenceBackendMatchesBestBackend) {
  for (const char* arch : kArchs) {
    SCOPED_TRACE(arch);
    const ModelFiles files = open_tiny(arch);
    ThreadPool pool(2);
    const auto best = create_model(files, std::make_shared<kernels::CpuBackend>(pool));
    const auto ref = create_model(
        files, std::make_shared<kernels::CpuBackend>(pool, kernels::reference_cpu_kernels()));
    auto ws_best = best->make_workspace({}), ws_ref = ref->make_workspace({});
    for (const auto& script : {script_a(), script_b()}) {
      // F32 weights: the fast paths differ from the reference only in summation order.
      EXPECT_LT(nmse(run_script(*best, script, *ws_best), run_script(*ref, script, *ws_ref)), 1e-8);
    }
  }
}

// A sliding window reaches the kernels per layer: one past every position changes nothing, a short
// one changes the logits past it; a chunked prefill then gives a one-step prefill's logits, and the
// reference backend the fast one's.
TEST(Forward, SlidingWindow) {
  ModelFiles files = open_tiny("llama");
  ThreadPool pool(2);
  const auto full = create_model(files, pool);
  files.config.sliding_window = 9;  // script_b's positions are 0..8
  const auto wide = create_model(files, pool);
  files.config.sliding_window = 3;
  const auto best = create_model(files, std::make_shared<kernels::CpuBackend>(pool));
  const auto ref = create_model(files, std::make_shared<kernels::CpuBackend>(pool, kernels::reference_cpu_kernels()));
  files.config.window_layers = {true, false};
  const auto first_layer = create_model(files, pool);
  auto ws = full->make_workspace({});
  auto ws_best = best->make_workspace({}), ws_ref = ref->make_workspace({});
  const std::vector<float> want = run_script(*full, script_b(), *ws);
  EXPECT_TRUE(bitwise_equal(run_script(*wide, script_b(), *wide->make_workspace({})), want));
  const std::vector<float> windowed = run_script(*best, script_b(), *ws_best);
  EXPECT_GT(nmse(windowed, want), 1e-4);
  EXPECT_LT(nmse(run_script(*ref, script_b(), *ws_ref), windowed), 1e-8);
  const std::vector<float> one_layer = run_script(*first_layer, script_b(), *first_layer->make_workspace({}));
  EXPECT_GT(nmse(one_layer, want), 1e-6);
  EXPECT_GT(nmse(one_layer, windowed), 1e-6);
  // script_b's sequence as one prefill of positions 0..6, then decodes of 7 and 8.
  const std::vector<StepInput> one_prefill = {make_step({{2, {20, 21, 22, 23, 24, 25, 26}, 0, true}}),
                                              make_step({{2, {27}, 7, true}}), make_step({{2, {28}, 8, true}})};
  EXPECT_LT(nmse(run_script(*best, one_prefill, *ws_best), windowed), 1e-10);
}

// The CPU backend, except that it claims no matmul for F16 weights.
class NoF16Backend final : public kernels::Backend {
 public:
  explicit NoF16Backend(ThreadPool& pool) : cpu_(pool) {}
  const char* name() const override { return "no-f16"; }
  Device device() const override { return Device::Cpu; }
  bool supports(kernels::Op op, DType dtype) const override {
    return dtype != DType::F16 && cpu_.supports(op, dtype);
  }
  kernels::Buffer allocate(size_t num_bytes) override { return cpu_.allocate(num_bytes); }
  void matmul(const Tensor& w, const float* x, float* y, int64_t n) override { cpu_.matmul(w, x, y, n); }
  void gather_rows(const Tensor& t, const int32_t* ids, int64_t n, float* out) override {
    cpu_.gather_rows(t, ids, n, out);
  }
  void copy_rows(const float* src, int64_t dim, const int32_t* ids, int64_t n, float* dst) override {
    cpu_.copy_rows(src, dim, ids, n, dst);
  }
  void scatter_add_rows(const float* src, int64_t dim, const int32_t* ids, const float* scales, int64_t n,
                        float* dst) override {
    cpu_.scatter_add_rows(src, dim, ids, scales, n, dst);
  }
  void copy_columns(const float* src, int64_t ss, float* dst, int64_t ds, int64_t rows, int64_t width) override {
    cpu_.copy_columns(src, ss, dst, ds, rows, width);
  }
  void fill(float* x, float value, int64_t n) override { cpu_.fill(x, value, n); }
  void rmsnorm(const float* x, const float* w, float* y, int64_t rows, int64_t dim, float eps) override {
    cpu_.rmsnorm(x, w, y, rows, dim, eps);
  }
  void silu_mul(const float* g, const float* u, float* out, int64_t n) override { cpu_.silu_mul(g, u, out, n); }
  void clamped_swiglu(const float* g, const float* u, float* out, int64_t n, float alpha, float limit) override {
    cpu_.clamped_swiglu(g, u, out, n, alpha, limit);
  }
  void softmax_inplace(float* x, int64_t rows, int64_t dim) override { cpu_.softmax_inplace(x, rows, dim); }
  void add_inplace(float* y, const float* x, int64_t n) override { cpu_.add_inplace(y, x, n); }
  void add_bias(float* y, const float* b, int64_t rows, int64_t dim) override { cpu_.add_bias(y, b, rows, dim); }
  void rope_inplace(float* x, int64_t t, int64_t h, int64_t d, int64_t r, const int32_t* p, const float* f,
                    bool interleaved) override {
    cpu_.rope_inplace(x, t, h, d, r, p, f, interleaved);
  }
  void paged_attention(const float* q, float* out, const kernels::AttentionBatch& batch,
                       const kernels::KvLayerView& kv, int64_t heads, float scale, const float* sinks) override {
    cpu_.paged_attention(q, out, batch, kv, heads, scale, sinks);
  }
  void store_kv(const float* k, const float* v, const int64_t* slots, int64_t n,
                const kernels::KvLayerView& kv) override {
    cpu_.store_kv(k, v, slots, n, kv);
  }

 protected:
  void deallocate(void*, size_t) noexcept override {}  // buffers belong to cpu_

 private:
  kernels::CpuBackend cpu_;
};

TEST(Forward, CreateModelRefusesDtypesTheBackendDoesNotSupport) {
  const auto dir = test::fresh_dir("forward_f16");
  test::write_file(dir / "tiny.gguf", test::tiny_gguf_writer(TinySpec{}, test::kGgmlF16).build());
  const ModelFiles files = open_model((dir / "tiny.gguf").string());
  ThreadPool pool(1);
  std::string error;
  try {
    create_model(files, std::make_shared<NoF16Backend>(pool));
  } catch (const Error& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("is f16, which the no-f16 backend cannot multiply"), std::string::npos) << error;
  EXPECT_NO_THROW(create_model(files, pool));  // the CPU backend runs f16
}

}  // namespace
}  // namespace llmesh
