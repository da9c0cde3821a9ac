// AVX2 + FMA + F16C fast paths (kernels/cpu/*_avx2.cpp), for CPUs without the AVX-512 set
// (Zen 1-3, most Intel desktop parts). Call them only when cpu::has_avx2_kernels() is true;
// contracts are those of kernels::Backend (kernels/backend.h).
// Each falls back to the reference for shapes or dtypes it does not handle.
#pragma once

#include <cstdint>

#include "kernels/ops.h"

namespace llmesh::kernels::avx2 {

void matmul(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool);

// Whether matmul quantizes x to int8 blocks for this weight dtype and token count. The result
// then equals the reference applied to x rounded per block of 32 (256 for weights in 256-value
// super-blocks: Q8_K) to d * round(x / d), d = amax / 127 (the scale kept in f32, ties to even),
// up to f32 summation order. The same contract as avx512::matmul_quantizes_activations.
bool matmul_quantizes_activations(DType dtype, int64_t num_tokens);
// The int8 path itself (Q8_0/Q4_0 weights, any num_tokens; in must be a multiple of 32).
void matmul_int8(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool);
// Whether matmul_int8_gemm handles this dtype: Q4_K, Q5_K, Q6_K.
bool has_int8_gemm(DType dtype);
// Prefill (many tokens): 8-row panels unpacked to unsigned bytes against x in int8 blocks
// (matmul_int8_gemm_avx2.cpp); the same result contract as matmul_int8 / matmul_kquants.
void matmul_int8_gemm(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool);
// Whether matmul_kquants handles this dtype: Q4_K, Q5_K, Q6_K, IQ4_XS.
bool has_kquant_matmul(DType dtype);
// Weights in 256-value super-blocks against x quantized to Q8_K (matmul_kquants_avx2.cpp): the
// result equals the reference on x rounded per 256 values to d * round(x / d), d = amax / 127.
void matmul_kquants(const Tensor& w, const float* x, float* y, int64_t num_tokens, ThreadPool& pool);

void rmsnorm(const float* x, const float* weight, float* y, int64_t num_rows, int64_t dim, float eps);
void silu_mul(const float* gate, const float* up, float* out, int64_t n);
void softmax_inplace(float* x, int64_t n);
void add_inplace(float* y, const float* x, int64_t n);
void rope_inplace(float* x, int64_t num_tokens, int64_t num_heads, int64_t head_dim, int64_t rotary_dim,
                  const int32_t* positions,
                  const float* inv_freq, bool interleaved);

void paged_attention(const float* q, float* out, const AttentionBatch& batch, const KvLayerView& kv, int64_t num_heads,
                     float scale, const float* sinks, ThreadPool& pool);

}  // namespace llmesh::kernels::avx2
