// The math of a forward pass, on the CPU.
//
// Every op has a scalar reference (kernels/ref/, plain C++) and may have fast
// paths (kernels/cpu/, AVX-512 with BF16/VNNI) chosen once at run time from the
// CPU's features. LLMESH_KERNELS=ref in the environment forces the reference
// path everywhere (for debugging a numerical difference). The unit tests check
// every fast path against the reference.
//
// Conventions: activations are f32 and row-major, shapes outermost-first;
// weights are Tensor views {out, in} in any DType, rows contiguous.
// Preconditions (shapes, alignment of quantized rows) are the caller's job;
// ops check only what is cheap and throw llmesh::Error on a violation.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "core/tensor.h"
#include "core/thread_pool.h"

namespace llmesh::kernels {

// Name of the implementation the dispatched ops use: "avx512" or "ref".
const char* backend_name();

// ---- linear layers ----------------------------------------------------------

// y[t, o] = sum_i w[o, i] * x[t, i].
// w: {out, in} of any DType; x: [num_tokens, in] f32; y: [num_tokens, out] f32 (must not alias x).
// Parallel over output rows on `pool`. Small num_tokens (decode) streams each weight row once
// for all tokens; large num_tokens (prefill) dequantizes panels of rows and reuses them across tokens.
// Numerics: f32 products and sums, except that on the AVX-512 path Q8_0/Q4_0 weights with few
// tokens (< 128) meet x rounded to int8 blocks of 32 (as llama.cpp does): relative error ~1e-2..1e-3
// per output, NMSE ~1e-5 against the reference.
void matmul(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool);

// ---- (de)quantization -------------------------------------------------------

// Any dtype -> f32. n must be a multiple of the dtype's block size.
void dequantize_row(DType dtype, const void* src, float* dst, int64_t n);
// GGUF Q8_0: per block of 32, d = amax/127, q = round(x/d). n must be a multiple of 32.
void quantize_row_q8_0(const float* src, BlockQ8_0* dst, int64_t n);
// GGUF Q4_0: per block of 32, m = the value with the largest |x| (sign kept), d = m/-8,
// q = min(15, int(x/d + 8.5)). n must be a multiple of 32.
void quantize_row_q4_0(const float* src, BlockQ4_0* dst, int64_t n);

// ---- element-wise and row ops -------------------------------------------------

// y = x / sqrt(mean(x^2) + eps) * weight, per row. x, y: [num_rows, dim]; weight: [dim]. y may alias x.
void rmsnorm(const float* x, const float* weight, float* y, int64_t num_rows, int64_t dim, float eps);
// out = gate * sigmoid(gate) * up (SwiGLU). out may alias gate or up.
void silu_mul(const float* gate, const float* up, float* out, int64_t n);
// x = softmax(x), subtracting the max first so large logits do not overflow.
void softmax_inplace(float* x, int64_t n);
// y += x
void add_inplace(float* y, const float* x, int64_t n);

// Rotary position embedding, in place. x: [num_tokens, num_heads, head_dim];
// positions: [num_tokens]; inv_freq: [head_dim / 2]; angle = positions[t] * inv_freq[i].
// interleaved = false (NeoX / Hugging Face): rotates pairs (i, i + head_dim/2);
// interleaved = true (GGUF llama): rotates pairs (2i, 2i + 1).
void rope_inplace(float* x, int64_t num_tokens, int64_t num_heads, int64_t head_dim,
                  const int32_t* positions, const float* inv_freq, bool interleaved);

// ---- paged attention ----------------------------------------------------------

// One layer of the KV block pool. K and V are f32 for now; an f16 pool would add
// a dtype here and a second kernel behind paged_attention/store_kv.
struct KvLayerView {
  float* k = nullptr;  // [num_blocks, block_size, num_kv_heads, head_dim]
  float* v = nullptr;  // [num_blocks, block_size, num_kv_heads, head_dim]
  int64_t block_size = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;

  // Floats in one pool slot (one position of one block) and in one block.
  int64_t slot_stride() const { return num_kv_heads * head_dim; }
  int64_t block_stride() const { return block_size * slot_stride(); }
};

// A flattened batch: the tokens of several sequences concatenated.
struct AttentionBatch {
  int64_t num_tokens = 0;
  const int32_t* positions = nullptr;            // [num_tokens] position of each query in its sequence
  const int32_t* seq_index = nullptr;            // [num_tokens] which sequence each token belongs to
  const int32_t* const* block_tables = nullptr;  // block_tables[seq][j] = pool block of positions [j*bs, (j+1)*bs)
};

// out[t, h, :] = softmax_j(q[t, h, :] . K[seq(t), j, h / g, :] * scale) . V[seq(t), j, h / g, :]
// over j = 0..positions[t] (causal); g = num_heads / num_kv_heads (grouped-query attention).
// K/V of every position <= positions[t] must already be in the pool (call store_kv first).
// q, out: [num_tokens, num_heads, head_dim] f32 (out must not alias q). Parallel over tokens and heads.
void paged_attention(const float* q, float* out, const AttentionBatch& batch, const KvLayerView& kv,
                     int64_t num_heads, float scale, ThreadPool& pool);

// Writes k_new/v_new [num_tokens, num_kv_heads, head_dim] into the pool at
// slot_mapping[t] = block * block_size + offset. A negative slot skips that token (padding).
void store_kv(const float* k_new, const float* v_new, const int64_t* slot_mapping, int64_t num_tokens,
              const KvLayerView& kv);

}  // namespace llmesh::kernels
