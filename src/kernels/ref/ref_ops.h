// Scalar reference kernels: plain C++, written to be obviously correct rather than fast.
//
// They define what every op means; the fast paths in kernels/cpu/ are tested
// against them, and LLMESH_KERNELS=ref makes the dispatched ops use them.
// Signatures and contracts are those of kernels/ops.h.
#pragma once

#include <cstdint>

#include "kernels/ops.h"

namespace llmesh::kernels::ref {

// Dequantizes each weight row to f32 and accumulates dot products in double.
void matmul(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool);

void dequantize_row(DType dtype, const void* src, float* dst, int64_t n);
void quantize_row_q8_0(const float* src, BlockQ8_0* dst, int64_t n);
void quantize_row_q4_0(const float* src, BlockQ4_0* dst, int64_t n);

void rmsnorm(const float* x, const float* weight, float* y, int64_t num_rows, int64_t dim, float eps);
void silu_mul(const float* gate, const float* up, float* out, int64_t n);
void softmax_inplace(float* x, int64_t n);
void add_inplace(float* y, const float* x, int64_t n);
void rope_inplace(float* x, int64_t num_tokens, int64_t num_heads, int64_t head_dim,
                  const int32_t* positions, const float* inv_freq, bool interleaved);

void paged_attention(const float* q, float* out, const AttentionBatch& batch, const KvLayerView& kv,
                     int64_t num_heads, float scale, ThreadPool& pool);
void store_kv(const float* k_new, const float* v_new, const int64_t* slot_mapping, int64_t num_tokens,
              const KvLayerView& kv);

}  // namespace llmesh::kernels::ref
