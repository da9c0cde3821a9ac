// The ISA-independent part of the super-block matmuls (matmul_kquants_avx2.cpp,
// matmul_kquants_avx512.cpp): x quantized once per call, rows split over the pool in tiles, and a
// thread walks its tile once per group of up to kMaxTokens tokens, so the rows stay in L1/L2
// while x streams.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/error.h"

#include "core/thread_pool.h"
#include "kernels/ops.h"

namespace llmesh::kernels::cpu {

// dots[n - 1](row, xs, num_blocks, out) computes out[i] = row . x[i] for i < n, xs[i] pointing at
// token i's num_blocks quantized blocks. xq: [num_tokens][num_blocks]. y: [num_tokens][rows].
template <class XBlock, int kMaxTokens, class DotFn>
void dot_row_tiles(const Tensor& w, const XBlock* xq, int64_t num_blocks, int64_t num_tokens,
                   const DotFn (&dots)[kMaxTokens], int64_t row_tile, float* y, ThreadPool& pool) {
  const int64_t num_out = w.shape[0];
  pool.parallel_for(num_out, row_tile, [&](int64_t row_begin, int64_t row_end) {
    for (int64_t tile = row_begin; tile < row_end; tile += row_tile) {
      const int64_t tile_end = std::min(row_end, tile + row_tile);
      for (int64_t t = 0; t < num_tokens; t += kMaxTokens) {
        const int n = int(std::min<int64_t>(kMaxTokens, num_tokens - t));
        const XBlock* xs[kMaxTokens];
        for (int i = 0; i < n; ++i) xs[i] = xq + (t + i) * num_blocks;
        float out[kMaxTokens];
        for (int64_t o = tile; o < tile_end; ++o) {
          dots[n - 1](static_cast<const uint8_t*>(w.row(o)), xs, num_blocks, out);
          for (int i = 0; i < n; ++i) y[(t + i) * num_out + o] = out[i];
        }
      }
    }
  });
}

// y = w x for weights in 256-value super-blocks: quantize(x256, XBlock*) quantizes each 256 values
// of x (once per call, for every thread), dots as in dot_row_tiles; dots[0] null: not a type the
// family handles.
template <class XBlock, int kMaxTokens, class DotFn, class Quantize>
void superblock_matmul(const Tensor& w, const float* x, float* y, int64_t num_tokens, const DotFn (&dots)[kMaxTokens],
                       int64_t row_tile, Quantize quantize, ThreadPool& pool) {
  const int64_t num_in = w.shape[1];
  check(num_in % kQKK == 0, "matmul: {} inputs of {} is not a multiple of {}", num_in, w.name, kQKK);
  check(dots[0] != nullptr, "matmul_kquants: {} weights", dtype_name(w.dtype));
  const int64_t num_blocks = num_in / kQKK;
  thread_local std::vector<XBlock> xq;  // [num_tokens][num_blocks]
  xq.resize(size_t(num_tokens * num_blocks));
  for (int64_t i = 0; i < num_tokens * num_blocks; ++i) quantize(x + i * kQKK, &xq[size_t(i)]);
  // Workers see their own thread_local xq: pass the caller's.
  dot_row_tiles(w, static_cast<const XBlock*>(xq.data()), num_blocks, num_tokens, dots, row_tile, y, pool);
}

}  // namespace llmesh::kernels::cpu
