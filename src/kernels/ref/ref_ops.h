// Scalar reference kernels: plain C++, written to be obviously correct rather than fast.
//
// They define what every op means; the fast paths in kernels/cpu/ are tested
// against them, and LLMESH_KERNELS=ref makes the dispatched ops use them.
// Contracts are those of kernels::Backend (kernels/backend.h); the parallel ones take
// the thread pool the CPU backend runs them on.
#pragma once

#include <cstdint>

#include "kernels/ops.h"

namespace llmesh::kernels::ref {

// Dequantizes each weight row to f32 and accumulates dot products in double.
void matmul(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool);

// Every dtype; n must be a multiple of the block size.
void dequantize_row(DType dtype, const void* src, float* dst, int64_t n);
// The K-quants, IQ4_NL / IQ4_XS, MXFP4 and Q8_K (dequantize_kquants_ref.cpp); false for other dtypes.
bool dequantize_row_super_blocks(DType dtype, const void* src, float* dst, int64_t n);
// Q8_K, the activation type of K-quant dot products: the signed extreme of each 256 maps to -128.
void quantize_row_q8_k(const float* src, BlockQ8_K* dst, int64_t n);
void quantize_row_q8_0(const float* src, BlockQ8_0* dst, int64_t n);
void quantize_row_q4_0(const float* src, BlockQ4_0* dst, int64_t n);

void rmsnorm(const float* x, const float* weight, float* y, int64_t num_rows, int64_t dim, float eps);
void silu_mul(const float* gate, const float* up, float* out, int64_t n);
void clamped_swiglu(const float* gate, const float* up, float* out, int64_t n, float alpha, float limit);
void softmax_inplace(float* x, int64_t n);
void add_inplace(float* y, const float* x, int64_t n);
void rope_inplace(float* x, int64_t num_tokens, int64_t num_heads, int64_t head_dim, int64_t rotary_dim,
                  const int32_t* positions, const float* inv_freq, bool interleaved);

// Row moves (gather_rows, copy_rows, scatter_add_rows, copy_columns, fill): the only CPU implementation,
// memory-bound either way.
void gather_rows(const Tensor& table, const int32_t* row_ids, int64_t num_rows, float* out);
void copy_rows(const float* src, int64_t dim, const int32_t* row_ids, int64_t num_rows, float* dst);
void scatter_add_rows(const float* src, int64_t dim, const int32_t* row_ids, const float* scales,
                      int64_t num_rows, float* dst);
void copy_columns(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int64_t num_rows,
                  int64_t width);
void fill(float* x, float value, int64_t n);

void paged_attention(const float* q, float* out, const AttentionBatch& batch, const KvLayerView& kv,
                     int64_t num_heads, float scale, const float* sinks, ThreadPool& pool);
void store_kv(const float* k_new, const float* v_new, const int64_t* slot_mapping, int64_t num_tokens,
              const KvLayerView& kv);

}  // namespace llmesh::kernels::ref
