// What every backend's ops share: the KV pool and batch descriptions that
// paged attention reads, and the host-side format conversions used at load
// time and by tests. The ops themselves are methods of kernels::Backend
// (kernels/backend.h); the CPU backend is kernels/cpu/cpu_backend.h.
//
// On the CPU every op has a scalar reference (kernels/ref/, plain C++) and may
// have fast paths (kernels/cpu/: AVX-512 with BF16/VNNI, or AVX2 + FMA + F16C)
// chosen once at run time from the CPU's features. LLMESH_KERNELS=ref in the
// environment forces the reference path everywhere (for debugging a numerical
// difference); =avx2 / =avx512 force a fast family the CPU supports. The unit
// tests check every fast path against the reference.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "core/tensor.h"
#include "core/thread_pool.h"

namespace llmesh::kernels {

// Name of the CPU kernel family the CPU backend uses: "avx512", "avx2" or "ref".
const char* backend_name();

// ---- host (de)quantization ----------------------------------------------------
// Plain host-memory conversions (at load, in tools and tests); not device ops.

// Any dtype -> f32. n must be a multiple of the dtype's block size.
void dequantize_row(DType dtype, const void* src, float* dst, int64_t n);
// GGUF Q8_0: per block of 32, d = amax/127, q = round(x/d). n must be a multiple of 32.
void quantize_row_q8_0(const float* src, BlockQ8_0* dst, int64_t n);
// GGUF Q4_0: per block of 32, m = the value with the largest |x| (sign kept), d = m/-8,
// q = min(15, int(x/d + 8.5)). n must be a multiple of 32.
void quantize_row_q4_0(const float* src, BlockQ4_0* dst, int64_t n);
// Q8_K (the activation type of K-quant dot products): the signed extreme of each 256 maps to -128.
void quantize_row_q8_k(const float* src, BlockQ8_K* dst, int64_t n);

// ---- paged attention data ---------------------------------------------------------

// One layer of the KV block pool. Each position holds, per kv head, one row of
// head_dim values in `dtype` (f32, f16, bf16, or q8_0 blocks of 32 along
// head_dim): store_kv converts from f32 on the way in, attention on the way out.
// V rows are laid out as K rows are; attention reads the first v_dim() values of
// each. Multi-head latent attention has v == k and value_dim < head_dim: its one
// cached row per position is [latent (the values) | rotary key].
//
// `window` > 0 is sliding-window attention (Mistral 7B v0.1, the local layers of
// Gemma 2/3 and gpt-oss): the query at position p attends to keys p - window < j <= p,
// the last `window` positions counting itself, as Hugging Face's sliding-window mask
// (kv_idx > q_idx - sliding_window) and llama.cpp's (masked when p - j >= n_swa) define
// it. Keys before the window stay in the pool, but no kernel reads a pool block that lies
// wholly before the window of its sequence's earliest query in the batch.
struct KvLayerView {
  void* k = nullptr;  // [num_blocks, block_size, num_kv_heads] rows of head_dim
  void* v = nullptr;  // [num_blocks, block_size, num_kv_heads] rows of head_dim (== k for MLA)
  int64_t block_size = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  DType dtype = DType::F32;
  int64_t value_dim = 0;  // 0: head_dim
  int64_t window = 0;     // 0: full causal attention; > 0: the last `window` positions

  int64_t v_dim() const { return value_dim > 0 ? value_dim : head_dim; }

  // Bytes of one head's row, of one pool slot (one position of one block), of one block.
  size_t row_bytes() const { return dtype_row_bytes(dtype, head_dim); }
  size_t slot_bytes() const { return size_t(num_kv_heads) * row_bytes(); }
  size_t block_bytes() const { return size_t(block_size) * slot_bytes(); }
  // The row of kv head `kv_head` at pool slot `slot` = block * block_size + offset.
  uint8_t* k_row(int64_t slot, int64_t kv_head) const { return row(k, slot, kv_head); }
  uint8_t* v_row(int64_t slot, int64_t kv_head) const { return row(v, slot, kv_head); }

 private:
  uint8_t* row(void* base, int64_t slot, int64_t kv_head) const {
    return static_cast<uint8_t*>(base) + size_t(slot) * slot_bytes() + size_t(kv_head) * row_bytes();
  }
};

// The element types a KV pool can hold (what --kv-cache-dtype accepts).
bool is_kv_dtype(DType dtype);

// A flattened batch: the tokens of several sequences concatenated.
struct AttentionBatch {
  int64_t num_tokens = 0;
  const int32_t* positions = nullptr;            // [num_tokens] position of each query in its sequence
  const int32_t* seq_index = nullptr;            // [num_tokens] which sequence each token belongs to
  const int32_t* const* block_tables = nullptr;  // block_tables[seq][j] = pool block of positions [j*bs, (j+1)*bs)
};

}  // namespace llmesh::kernels
