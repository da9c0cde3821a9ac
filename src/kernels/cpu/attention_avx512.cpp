// AVX-512 paged attention, flash-attention style on the CPU.
//
// A tile is up to 16 queries that read the same K/V: the query heads of one kv
// head (GQA group) for a run of consecutive tokens of one sequence (a prefill
// chunk; a decode token is a run of one). Tiles are handed out dynamically
// (causal prefill makes late tokens far more expensive than early ones).
//
// Per pool block, the tile:
//   1. copies the block's K and V rows of its kv head into contiguous f32 scratch,
//      converting from the pool's dtype (pool rows are num_kv_heads * head_dim apart,
//      often 4 KiB: L1 set aliasing);
//   2. scores every key against all 16 queries: 16 dot-product vectors, reduced
//      together by one 16 x 16 transpose, giving scores[key][query lane];
//   3. runs the online softmax vectorized across the 16 query lanes (running max,
//      running sum, rescale factor), masking keys past each query's position and,
//      under a sliding window, keys before its window (only in the blocks that reach
//      below the latest query's window: the others are inside every query's);
//   4. adds probability-weighted V rows into each query's running output.
// Under a sliding window the blocks start at the one holding the window start of the tile's
// earliest query, so a decode reads about `window` keys whatever the context.
// Values may be narrower than keys and live in the K rows (multi-head latent attention:
// rows of [latent | rotary key], the latent being the values): then step 1 converts only K.
#include <immintrin.h>

#include <atomic>
#include <cmath>
#include <vector>

#include "kernels/cpu/attention_tiles.h"
#include "kernels/cpu/avx512_ops.h"
#include "kernels/cpu/vec_math_avx512.h"
#include "kernels/ref/ref_ops.h"
#include "kernels/cpu/avx512_target.h"

LLMESH_AVX512_BEGIN

namespace llmesh::kernels::avx512 {

namespace {


using Tile = cpu::AttentionTile;
using cpu::kTileQueries;
using cpu::make_tiles;
using cpu::sink_into_sum;

// Per-thread scratch, sized for one layer's shapes.
struct Scratch {
  std::vector<float> q;       // [16][head_dim]    pre-scaled queries, lane-major
  std::vector<float> acc;     // [16][v_dim]       running (unnormalized) outputs
  std::vector<float> k, v;    // [block_size][head_dim], [block_size][v_dim]  this block's rows of the kv head
  std::vector<float> probs;   // [block_size][16]  scores, then probabilities
};

// dots[lane] = q[lane] * k_row elementwise-summed over head_dim chunks (16 partial sums per lane),
// for lanes < num_queries; the rest are zero. kLanes > 0 fixes num_queries = kLanes at compile time.
template <int kNumVecs, int kLanes>
__attribute__((always_inline)) inline void lane_dots(const float* q_buf, const __m512* k_row, __m512* dots,
                                                     int64_t num_queries = kLanes) {
  constexpr int64_t kHeadDim = 16 * kNumVecs;
  const int64_t num_lanes = kLanes > 0 ? kLanes : num_queries;
#pragma GCC unroll 16
  for (int64_t lane = 0; lane < (kLanes > 0 ? kLanes : kTileQueries); ++lane) {
    if (kLanes == 0 && lane >= num_lanes) {
      dots[lane] = _mm512_setzero_ps();
      continue;
    }
    const float* q = q_buf + lane * kHeadDim;
    __m512 dot = _mm512_mul_ps(_mm512_loadu_ps(q), k_row[0]);
#pragma GCC unroll 16
    for (int v = 1; v < kNumVecs; ++v) dot = _mm512_fmadd_ps(_mm512_loadu_ps(q + 16 * v), k_row[v], dot);
    dots[lane] = dot;
  }
}

// One K or V row of the pool, in its dtype, as 16 * kNumVecs f32 values in dst.
template <int kNumVecs>
__attribute__((always_inline)) inline void load_kv_row(DType dtype, const uint8_t* src, float* dst) {
  switch (dtype) {
    case DType::F32:
#pragma GCC unroll 16
      for (int v = 0; v < kNumVecs; ++v) _mm512_storeu_ps(dst + 16 * v, _mm512_loadu_ps(src + 64 * v));
      return;
    case DType::F16:
#pragma GCC unroll 16
      for (int v = 0; v < kNumVecs; ++v)
        _mm512_storeu_ps(dst + 16 * v, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 32 * v))));
      return;
    case DType::BF16:
#pragma GCC unroll 16
      for (int v = 0; v < kNumVecs; ++v) {
        const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 32 * v)));
        _mm512_storeu_ps(dst + 16 * v, _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16)));
      }
      return;
    default:  // block-quantized rows (q8_0): the scalar dequantizer, once per row per tile
      ref::dequantize_row(dtype, src, dst, 16 * kNumVecs);
  }
}

// Scores of one query against the block's keys, as one vector over keys (lane j = q . k[j]; lanes
// past n undefined): 16 dot-product vectors reduced by one transpose. For tiles of few queries
// (decode), where reducing across query lanes would waste most of each 16 x 16 transpose.
template <int kNumVecs>
__attribute__((always_inline)) inline __m512 key_scores(const float* q, const float* k_buf, int64_t n) {
  constexpr int64_t kHeadDim = 16 * kNumVecs;
  __m512 q_row[kNumVecs];
#pragma GCC unroll 16
  for (int v = 0; v < kNumVecs; ++v) q_row[v] = _mm512_loadu_ps(q + 16 * v);
  __m512 dots[16];
#pragma GCC unroll 16
  for (int64_t j = 0; j < 16; ++j) {
    if (j >= n) {
      dots[j] = _mm512_setzero_ps();
      continue;
    }
    const float* k = k_buf + j * kHeadDim;
    __m512 dot = _mm512_mul_ps(q_row[0], _mm512_loadu_ps(k));
#pragma GCC unroll 16
    for (int v = 1; v < kNumVecs; ++v) dot = _mm512_fmadd_ps(q_row[v], _mm512_loadu_ps(k + 16 * v), dot);
    dots[j] = dot;
  }
  transpose16x16(dots);
  __m512 scores = dots[0];
#pragma GCC unroll 16
  for (int i = 1; i < 16; ++i) scores = _mm512_add_ps(scores, dots[i]);
  return scores;
}

// Tiles of at most this many queries score key-major (key_scores) when blocks hold 16 keys.
constexpr int64_t kFewQueries = 4;

// kNumVecs: vectors of 16 per key (head_dim); kValueVecs: per value (v_dim <= head_dim).
template <int kNumVecs, int kValueVecs>
void attend_tile(const float* q_all, float* out_all, const AttentionBatch& batch, const KvLayerView& kv,
                 int64_t num_heads, float scale, const float* sinks, const Tile& tile, Scratch& s) {
  constexpr int64_t kHeadDim = 16 * kNumVecs, kValueDim = 16 * kValueVecs;
  const int64_t group = num_heads / kv.num_kv_heads;
  const int64_t num_queries = tile.num_tokens * tile.num_heads;
  // Lane i <-> (token tile.token_begin + i / num_heads_in_tile, head kv_head * group + head_begin + i % ...).
  auto query_index = [&](int64_t lane) {
    const int64_t t = tile.token_begin + lane / tile.num_heads;
    const int64_t h = tile.kv_head * group + tile.head_begin + lane % tile.num_heads;
    return t * num_heads + h;
  };
  alignas(64) float positions[kTileQueries];
  for (int64_t lane = 0; lane < kTileQueries; ++lane) {
    float* q_dst = s.q.data() + lane * kHeadDim;
    float* acc = s.acc.data() + lane * kValueDim;
    const bool valid = lane < num_queries;
    const float* q_src = valid ? q_all + query_index(lane) * kHeadDim : nullptr;
#pragma GCC unroll 16
    for (int v = 0; v < kNumVecs; ++v) {
      const __m512 q = valid ? _mm512_mul_ps(_mm512_loadu_ps(q_src + 16 * v), _mm512_set1_ps(scale))
                             : _mm512_setzero_ps();
      _mm512_storeu_ps(q_dst + 16 * v, q);
    }
#pragma GCC unroll 16
    for (int v = 0; v < kValueVecs; ++v) _mm512_storeu_ps(acc + 16 * v, _mm512_setzero_ps());
    // A padding lane sees no key (position -1), so it stays at zero.
    positions[lane] = valid ? float(batch.positions[tile.token_begin + lane / tile.num_heads]) : -1.0f;
  }
  const __m512 query_pos = _mm512_load_ps(positions);
  // Sliding window: keys at or below a lane's floor lie before its window.
  const __m512 window_floor = _mm512_sub_ps(query_pos, _mm512_set1_ps(float(kv.window)));
  // Raw pointers: stores through float* could alias the vectors' own fields and force reloads.
  const float* __restrict q_buf = s.q.data();
  float* __restrict acc_buf = s.acc.data();
  float* __restrict k_buf = s.k.data();
  float* __restrict v_buf = s.v.data();
  float* __restrict probs = s.probs.data();
  // A finite start (not -inf) keeps exp(old_max - new_max) a number for lanes that see no key yet.
  __m512 running_max = _mm512_set1_ps(-1e30f), running_sum = _mm512_setzero_ps();

  const int32_t* block_table = batch.block_tables[batch.seq_index[tile.token_begin]];
  const int64_t num_keys = int64_t(batch.positions[tile.token_begin + tile.num_tokens - 1]) + 1;
  // Sliding window: blocks from the one holding the earliest query's window start; keys from the
  // latest query's window start on are in every lane's window. Without one, all blocks, none masked below.
  const int64_t first_key =
      kv.window > 0 ? std::max<int64_t>(0, int64_t(batch.positions[tile.token_begin]) + 1 - kv.window) : 0;
  const int64_t in_every_window = kv.window > 0 ? num_keys - kv.window : 0;
  // Row j of a pool block for this kv head: base + block * block_bytes + j * slot_bytes.
  const size_t slot_bytes = kv.slot_bytes(), block_bytes = kv.block_bytes(), row_bytes = kv.row_bytes();
  const uint8_t* k_base = static_cast<const uint8_t*>(kv.k) + size_t(tile.kv_head) * row_bytes;
  const uint8_t* v_base = static_cast<const uint8_t*>(kv.v) + size_t(tile.kv_head) * row_bytes;
  // Values inside the K rows (MLA): read them from the converted keys (not __restrict: it may be k_buf).
  const bool values_in_keys = kv.v == kv.k;
  const float* values = values_in_keys ? k_buf : v_buf;
  const int64_t value_stride = values_in_keys ? kHeadDim : kValueDim;
  const bool few_queries = num_queries <= kFewQueries && kv.block_size == 16;
  for (int64_t key_begin = first_key / kv.block_size * kv.block_size; key_begin < num_keys;
       key_begin += kv.block_size) {
    const int64_t n = std::min(kv.block_size, num_keys - key_begin);
    const size_t block_offset = size_t(block_table[key_begin / kv.block_size]) * block_bytes;
    for (int64_t j = 0; j < n; ++j) {
      load_kv_row<kNumVecs>(kv.dtype, k_base + block_offset + size_t(j) * slot_bytes, k_buf + j * kHeadDim);
      if (!values_in_keys)
        load_kv_row<kValueVecs>(kv.dtype, v_base + block_offset + size_t(j) * slot_bytes, v_buf + j * kValueDim);
    }

    // 2. scores[j][lane] = q[lane] . k[j], masked to -inf past each lane's position (and before its window).
    __m512 block_max = _mm512_set1_ps(-INFINITY);
    const bool mask_window = key_begin < in_every_window;
    auto mask_and_store = [&](int64_t j, __m512 scores) {
      const __m512 key = _mm512_set1_ps(float(key_begin + j));
      __mmask16 visible = _mm512_cmp_ps_mask(key, query_pos, _CMP_LE_OQ);
      if (mask_window) visible = _mm512_mask_cmp_ps_mask(visible, key, window_floor, _CMP_GT_OQ);
      scores = _mm512_mask_blend_ps(visible, _mm512_set1_ps(-INFINITY), scores);
      block_max = _mm512_max_ps(block_max, scores);
      _mm512_storeu_ps(probs + j * kTileQueries, scores);
    };
    if (few_queries) {
      // Key-major: a vector of 16 key scores per query, then one transpose to [key][lane].
      __m512 by_lane[kTileQueries];
      for (int64_t lane = 0; lane < kTileQueries; ++lane)
        by_lane[lane] = lane < num_queries ? key_scores<kNumVecs>(q_buf + lane * kHeadDim, k_buf, n)
                                           : _mm512_setzero_ps();
      transpose16x16(by_lane);
      for (int64_t j = 0; j < n; ++j) mask_and_store(j, by_lane[j]);
    } else {
      for (int64_t j = 0; j < n; ++j) {
        __m512 k_row[kNumVecs];
#pragma GCC unroll 16
        for (int v = 0; v < kNumVecs; ++v) k_row[v] = _mm512_loadu_ps(k_buf + j * kHeadDim + 16 * v);
        __m512 dots[kTileQueries];
        if (num_queries == kTileQueries)
          lane_dots<kNumVecs, kTileQueries>(q_buf, k_row, dots);  // fully unrolled: dots stay in registers
        else
          lane_dots<kNumVecs, 0>(q_buf, k_row, dots, num_queries);
        transpose16x16(dots);
        __m512 scores = dots[0];
#pragma GCC unroll 16
        for (int i = 1; i < 16; ++i) scores = _mm512_add_ps(scores, dots[i]);
        mask_and_store(j, scores);
      }
    }

    // 3. online softmax across lanes.
    const __m512 new_max = _mm512_max_ps(running_max, block_max);
    const __m512 correction = exp_ps(_mm512_sub_ps(running_max, new_max));
    running_max = new_max;
    running_sum = _mm512_mul_ps(running_sum, correction);
    for (int64_t j = 0; j < n; ++j) {
      const __m512 p = exp_ps(_mm512_sub_ps(_mm512_loadu_ps(probs + j * kTileQueries), new_max));
      running_sum = _mm512_add_ps(running_sum, p);
      _mm512_storeu_ps(probs + j * kTileQueries, p);
    }

    // 4. acc[lane] = acc[lane] * correction[lane] + sum_j probs[j][lane] * v[j].
    alignas(64) float corrections[kTileQueries];
    _mm512_store_ps(corrections, correction);
    for (int64_t lane = 0; lane < num_queries; ++lane) {
      float* acc_ptr = acc_buf + lane * kValueDim;
      __m512 acc[kValueVecs];
      const __m512 c = _mm512_set1_ps(corrections[lane]);
#pragma GCC unroll 16
      for (int v = 0; v < kValueVecs; ++v) acc[v] = _mm512_mul_ps(_mm512_loadu_ps(acc_ptr + 16 * v), c);
      for (int64_t j = 0; j < n; ++j) {
        const __m512 p = _mm512_set1_ps(probs[j * kTileQueries + lane]);
#pragma GCC unroll 16
        for (int v = 0; v < kValueVecs; ++v)
          acc[v] = _mm512_fmadd_ps(p, _mm512_loadu_ps(values + j * value_stride + 16 * v), acc[v]);
      }
#pragma GCC unroll 16
      for (int v = 0; v < kValueVecs; ++v) _mm512_storeu_ps(acc_ptr + 16 * v, acc[v]);
    }
  }

  alignas(64) float sums[kTileQueries], maxes[kTileQueries];
  _mm512_store_ps(sums, running_sum);
  _mm512_store_ps(maxes, running_max);
  for (int64_t lane = 0; lane < num_queries; ++lane) {
    float norm = 1.0f;  // the sink's share: acc / (sum + exp(sink)), both relative to a common max
    if (sinks != nullptr) sink_into_sum(sinks[query_index(lane) % num_heads], maxes[lane], sums[lane], norm);
    const __m512 inv_sum = _mm512_set1_ps(norm / sums[lane]);
    float* out = out_all + query_index(lane) * kValueDim;
    const float* acc = acc_buf + lane * kValueDim;
#pragma GCC unroll 16
    for (int v = 0; v < kValueVecs; ++v)
      _mm512_storeu_ps(out + 16 * v, _mm512_mul_ps(_mm512_loadu_ps(acc + 16 * v), inv_sum));
  }
}

using TileFn = void (*)(const float*, float*, const AttentionBatch&, const KvLayerView&, int64_t, float, const float*,
                        const Tile&, Scratch&);

TileFn tile_fn_for(int64_t head_dim, int64_t v_dim) {
  if (v_dim != head_dim) {  // multi-head latent attention: [latent | rotary key] rows
    if (head_dim == 576 && v_dim == 512) return attend_tile<36, 32>;  // DeepSeek V3 / Kimi K2
    if (head_dim == 96 && v_dim == 64) return attend_tile<6, 4>;      // the tiny test model
    return nullptr;
  }
  switch (head_dim) {
    case 32: return attend_tile<2, 2>;
    case 64: return attend_tile<4, 4>;
    case 80: return attend_tile<5, 5>;
    case 96: return attend_tile<6, 6>;
    case 128: return attend_tile<8, 8>;
    case 192: return attend_tile<12, 12>;
    case 256: return attend_tile<16, 16>;
    default: return nullptr;
  }
}


}  // namespace

void paged_attention(const float* q, float* out, const AttentionBatch& batch, const KvLayerView& kv,
                     int64_t num_heads, float scale, const float* sinks, ThreadPool& pool) {
  const TileFn tile_fn = tile_fn_for(kv.head_dim, kv.v_dim());
  if (tile_fn == nullptr) return ref::paged_attention(q, out, batch, kv, num_heads, scale, sinks, pool);
  const std::vector<Tile> tiles = make_tiles(batch, num_heads, kv.num_kv_heads);
  const int64_t num_tiles = int64_t(tiles.size());
  // Longest tiles (latest positions) first, so the dynamic queue ends on short ones.
  std::atomic<int64_t> next_tile{0};
  pool.run([&](int, int) {
    thread_local Scratch scratch;
    scratch.q.resize(size_t(kTileQueries * kv.head_dim));
    scratch.acc.resize(size_t(kTileQueries * kv.v_dim()));
    scratch.k.resize(size_t(kv.block_size * kv.head_dim));
    scratch.v.resize(size_t(kv.block_size * kv.v_dim()));
    scratch.probs.resize(size_t(kv.block_size * kTileQueries));
    for (int64_t i = next_tile.fetch_add(1, std::memory_order_relaxed); i < num_tiles;
         i = next_tile.fetch_add(1, std::memory_order_relaxed))
      tile_fn(q, out, batch, kv, num_heads, scale, sinks, tiles[size_t(num_tiles - 1 - i)], scratch);
  });
}

}  // namespace llmesh::kernels::avx512

LLMESH_AVX512_END
