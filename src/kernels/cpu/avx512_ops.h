// AVX-512 fast paths (kernels/cpu/*_avx512.cpp). Call them only when
// cpu::has_avx512_kernels() is true; contracts are those of kernels::Backend
// (kernels/backend.h).
// Each falls back to the reference for shapes it does not handle.
#pragma once

#include <cstdint>

#include "kernels/ops.h"

namespace llmesh::kernels::avx512 {

void matmul(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool);

// Whether matmul quantizes x to int8 blocks for this weight dtype and token count: Q8_0/Q4_0 and
// the super-block types of matmul_kquants with few tokens go through VNNI integer dot products.
// The result then equals the reference applied to x rounded per block of 32 (256 for weights in
// 256-value super-blocks: Q8_K) to d * round(x / d), d = amax / 127 (the scale kept in f32, ties
// to even), up to f32 summation order. The same contract as avx2::matmul_quantizes_activations.
bool matmul_quantizes_activations(DType dtype, int64_t num_tokens);
// The VNNI path itself (Q8_0/Q4_0 weights, any num_tokens; in must be a multiple of 32).
void matmul_int8(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool);
// Whether matmul_int8_gemm handles this dtype: Q8_0, Q4_0, Q4_K, Q5_K, Q6_K, IQ4_XS.
bool has_int8_gemm(DType dtype);
// Prefill (many tokens): 16-row panels unpacked to unsigned bytes against x quantized per block
// (matmul_int8_gemm_avx512.cpp); the same result contract as matmul_kquants / matmul_int8.
void matmul_int8_gemm(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool);
// Whether matmul_kquants handles this dtype: Q4_K, Q5_K, Q6_K, IQ4_XS.
bool has_kquant_matmul(DType dtype);
// Weights in 256-value super-blocks against x quantized to Q8_K (matmul_kquants_avx512.cpp): the
// result equals the reference on x rounded per 256 values to d * round(x / d), d = amax / 127.
void matmul_kquants(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool);

void rmsnorm(const float* x, const float* weight, float* y, int64_t num_rows, int64_t dim, float eps);
void silu_mul(const float* gate, const float* up, float* out, int64_t n);
void softmax_inplace(float* x, int64_t n);
void add_inplace(float* y, const float* x, int64_t n);

void paged_attention(const float* q, float* out, const AttentionBatch& batch, const KvLayerView& kv,
                     int64_t num_heads, float scale, const float* sinks, ThreadPool& pool);

}  // namespace llmesh::kernels::avx512
