// The seam between the model code and the hardware it runs on.
//
// A Backend is one device (today the CPU; later a CUDA GPU): it allocates
// buffers in that device's memory, runs the ops of a forward pass on data in
// that memory, and says which ops it can run on which element types
// (supports), so a model can refuse at load what it could not run.
//
// Model code reaches every kernel through the Backend its model holds; it
// never calls a kernel directly, so a second backend is one class, not a
// rewrite of the architectures. One virtual call per op (never per row or per
// element): an op takes whole batches.
//
// Conventions: activations are f32 and row-major, shapes outermost-first;
// weights are Tensor views {out, in} in any DType, rows contiguous, in the
// backend's device memory. Every pointer an op takes points into the
// backend's memory (on the CPU, any host memory). Preconditions (shapes,
// alignment of quantized rows) are the caller's job; ops check only what is
// cheap and throw llmesh::Error on a violation.
//
// Threads: ops may be called from several threads at once (two micro-batches
// in flight, each with its own workspace); a backend makes that safe (the CPU
// backend runs one parallel op at a time on its thread pool).
//
// Adding a backend: derive from Backend, implement every op (falling back to
// nothing: an op the model calls must work for the dtypes supports() admits),
// and test each op against the CPU reference (tests/unit/kernels).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"
#include "core/tensor.h"
#include "kernels/ops.h"

namespace llmesh::kernels {

// The ops a forward pass uses, for supports().
enum class Op : uint8_t {
  Matmul,          // dtype: the weight's
  GatherRows,      // dtype: the table's (embedding lookup)
  CopyRows,        // dtype: the activations' (f32)
  ScatterAddRows,  // f32
  Fill,            // f32
  Rmsnorm,         // f32
  SiluMul,         // f32
  Softmax,         // f32
  Add,             // f32 (add_inplace, add_bias)
  Rope,            // f32
  PagedAttention,  // dtype: the KV pool's (f32, f16, bf16, q8_0: kernels::is_kv_dtype)
  StoreKv,         // dtype: the KV pool's
};
inline constexpr int kNumOps = int(Op::StoreKv) + 1;
const char* op_name(Op op);  // "matmul", "rmsnorm", ...

// Alignment of every Buffer a backend allocates (one cache line / one AVX-512 vector).
inline constexpr size_t kBufferAlignment = 64;

class Backend;

// An owning allocation in one backend's device memory: move-only, freed
// through the backend that allocated it, which must outlive it.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Backend* owner, void* data, size_t num_bytes) : owner_(owner), data_(data), num_bytes_(num_bytes) {}
  ~Buffer() { reset(); }
  Buffer(Buffer&& other) noexcept { *this = static_cast<Buffer&&>(other); }
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  float* f32() const { return static_cast<float*>(data_); }
  size_t num_bytes() const { return num_bytes_; }
  bool empty() const { return data_ == nullptr; }
  Backend* owner() const { return owner_; }
  void reset();  // frees now; the buffer becomes empty

 private:
  Backend* owner_ = nullptr;
  void* data_ = nullptr;
  size_t num_bytes_ = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // "cpu/avx512", "cpu/avx2", "cpu/ref", ... (for logs and `llmesh inspect`).
  virtual const char* name() const = 0;
  virtual Device device() const = 0;
  // Whether `op` runs on data of `dtype` here (see Op for which dtype each op is asked about).
  virtual bool supports(Op op, DType dtype) const = 0;

  // num_bytes of device memory aligned to kBufferAlignment; contents undefined.
  virtual Buffer allocate(size_t num_bytes) = 0;

  // ---- linear layers --------------------------------------------------------

  // y[t, o] = sum_i w[o, i] * x[t, i].
  // w: {out, in} of a dtype supports(Matmul) admits; x: [num_tokens, in] f32; y: [num_tokens, out] f32
  // (must not alias x). Numerics: f32 products and sums, except that the CPU backend rounds x to int8
  // blocks of 32 for Q8_0/Q4_0 weights, as llama.cpp does: the AVX-512 path with few tokens (< 128),
  // the AVX2 path at every token count (avx2::matmul_quantizes_activations); relative error
  // ~1e-2..1e-3 per output, NMSE ~1e-5 against the reference.
  virtual void matmul(const Tensor& w, const float* x, float* y, int64_t num_tokens) = 0;

  // ---- rows -----------------------------------------------------------------

  // out[i, :] = table[row_ids[i], :] converted to f32 (an embedding lookup).
  // table: {rows, dim} of a dtype supports(GatherRows) admits; out: [num_rows, dim].
  virtual void gather_rows(const Tensor& table, const int32_t* row_ids, int64_t num_rows, float* out) = 0;
  // dst[i, :] = src[row_ids[i], :]. src: [*, dim]; dst: [num_rows, dim] (must not alias src).
  virtual void copy_rows(const float* src, int64_t dim, const int32_t* row_ids, int64_t num_rows,
                         float* dst) = 0;
  // dst[row_ids[i], :] += scales[i] * src[i, :], for i in order. src: [num_rows, dim]; dst: [*, dim].
  virtual void scatter_add_rows(const float* src, int64_t dim, const int32_t* row_ids, const float* scales,
                                int64_t num_rows, float* dst) = 0;
  // dst[r * dst_stride + c] = src[r * src_stride + c] for r < num_rows, c < width: a block of
  // columns from one matrix into another (multi-head latent attention splits and joins the
  // parts of its heads with it). The two regions must not overlap.
  virtual void copy_columns(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int64_t num_rows,
                            int64_t width) = 0;
  // x[0..n) = value.
  virtual void fill(float* x, float value, int64_t n) = 0;

  // ---- element-wise and row ops ----------------------------------------------

  // y = x / sqrt(mean(x^2) + eps) * weight, per row. x, y: [num_rows, dim]; weight: [dim]. y may alias x.
  virtual void rmsnorm(const float* x, const float* weight, float* y, int64_t num_rows, int64_t dim,
                       float eps) = 0;
  // out = gate * sigmoid(gate) * up (SwiGLU). out may alias gate or up.
  virtual void silu_mul(const float* gate, const float* up, float* out, int64_t n) = 0;
  // gpt-oss's clamped SwiGLU (Op::SiluMul too): g = min(gate, limit), u = clamp(up, -limit, limit),
  // out = g * sigmoid(alpha * g) * (u + 1). out may alias gate or up.
  virtual void clamped_swiglu(const float* gate, const float* up, float* out, int64_t n, float alpha,
                              float limit) = 0;
  // Each row of x: [num_rows, dim] = softmax(row), subtracting the row's max first so large logits do
  // not overflow; -inf gets 0.
  virtual void softmax_inplace(float* x, int64_t num_rows, int64_t dim) = 0;
  // y += x. y, x: [n].
  virtual void add_inplace(float* y, const float* x, int64_t n) = 0;
  // y[r, :] += bias for every row. y: [num_rows, dim]; bias: [dim].
  virtual void add_bias(float* y, const float* bias, int64_t num_rows, int64_t dim) = 0;

  // Rotary position embedding, in place, on the first rotary_dim (even, <= head_dim) dims of
  // each head; dims [rotary_dim, head_dim) pass through (partial rotary, GLM-4.5 / DeepSeek).
  // x: [num_tokens, num_heads, head_dim]; positions: [num_tokens]; inv_freq: [rotary_dim / 2];
  // angle = positions[t] * inv_freq[i], with r = rotary_dim:
  // interleaved = false (NeoX / Hugging Face): rotates pairs (i, i + r/2);
  // interleaved = true (GGUF llama): rotates pairs (2i, 2i + 1), i < r/2.
  virtual void rope_inplace(float* x, int64_t num_tokens, int64_t num_heads, int64_t head_dim, int64_t rotary_dim,
                            const int32_t* positions, const float* inv_freq, bool interleaved) = 0;

  // ---- paged attention -------------------------------------------------------

  // out[t, h, :] = softmax_j(q[t, h, :] . K[seq(t), j, h / g, :] * scale) . V[seq(t), j, h / g, :]
  // over j = 0..positions[t] (causal), or over its last kv.window positions
  // positions[t] - kv.window < j <= positions[t] (sliding window, kv.window > 0);
  // g = num_heads / num_kv_heads (grouped-query attention).
  // K/V of every such position must already be in the pool (call store_kv first).
  // q: [num_tokens, num_heads, head_dim], out: [num_tokens, num_heads, kv.v_dim()] f32 (out must
  // not alias q); V is the first v_dim() values of each V row (MLA: of each K row).
  // sinks (gpt-oss's attention sinks), when not null: sinks[h] is one more logit in head h's softmax
  // denominator, unscaled, with no value (it takes probability mass from every key); [num_heads].
  virtual void paged_attention(const float* q, float* out, const AttentionBatch& batch, const KvLayerView& kv,
                               int64_t num_heads, float scale, const float* sinks) = 0;
  // Writes k_new/v_new [num_tokens, num_kv_heads, head_dim] into the pool at
  // slot_mapping[t] = block * block_size + offset. A negative slot skips that token (padding).
  // v_new is nullptr exactly when the values live in the K rows (kv.v == kv.k: MLA).
  virtual void store_kv(const float* k_new, const float* v_new, const int64_t* slot_mapping, int64_t num_tokens,
                        const KvLayerView& kv) = 0;

 protected:
  friend class Buffer;
  // Frees what allocate() returned.
  virtual void deallocate(void* data, size_t num_bytes) noexcept = 0;
};

inline Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = other.owner_, data_ = other.data_, num_bytes_ = other.num_bytes_;
    other.owner_ = nullptr, other.data_ = nullptr, other.num_bytes_ = 0;
  }
  return *this;
}

inline void Buffer::reset() {
  if (data_ != nullptr) owner_->deallocate(data_, num_bytes_);
  owner_ = nullptr, data_ = nullptr, num_bytes_ = 0;
}

}  // namespace llmesh::kernels
