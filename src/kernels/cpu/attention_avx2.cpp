// AVX2 paged attention, flash-attention style on the CPU.
//
// A tile is up to 16 queries that read the same K/V: the query heads of one kv
// head (GQA group) for a run of consecutive tokens of one sequence (a prefill
// chunk; a decode token is a run of one). Each tile reads its kv head's K/V once,
// so more queries per tile means less K/V traffic (a few hundred tokens of K/V
// do not fit a 512 KiB L2). Tiles are handed out dynamically (causal prefill
// makes late tokens far more expensive than early ones).
//
// Keys are taken 16 at a time (a chunk; chunks may span pool blocks). Per chunk the tile:
//   1. transposes the chunk's K rows of its kv head into kt [head_dim][16] (8 x 8
//      in registers) and copies its V rows into contiguous scratch (pool rows are
//      num_kv_heads * head_dim apart, often 4 KiB: L1 set aliasing), converting
//      both to f32 from the pool's dtype;
//   2. scores the chunk as a small matmul, scores[query][16 keys] = q . kt, with a
//      register tile of up to 6 queries x 16 keys (12 accumulators) and broadcast
//      FMAs: each kt load serves 6 queries and no horizontal sums are needed (a
//      dot product per (query, key) would be latency-bound on AVX2's 16 registers);
//   3. runs the online softmax per query (running max, running sum, rescale
//      factor), masking keys past each query's position and, under a sliding
//      window, keys before its window (only in the chunks that reach below the
//      latest query's window: the others are inside every query's);
//   4. adds probability-weighted V rows into each query's running output: the same
//      register tile, 6 queries x 16 dimensions at a time, with V rows as the panel.
// Under a sliding window the chunks start at the window of the tile's earliest query,
// so a decode reads `window` keys whatever the context.
// Values may be narrower than keys (multi-head latent attention: the values are the first
// v_dim dims of the K rows [latent | rotary key], read through kv.v == kv.k).
#include <immintrin.h>

#include <atomic>
#include <cmath>
#include <vector>

#include "kernels/cpu/attention_tiles.h"
#include "kernels/cpu/avx2_ops.h"
#include "kernels/cpu/vec_math_avx2.h"
#include "kernels/ref/ref_ops.h"

#include "kernels/cpu/avx2_target.h"

LLMESH_AVX2_BEGIN

namespace llmesh::kernels::avx2 {

namespace {

constexpr int kChunkKeys = 16;  // two vectors of scores per query
constexpr int kScoreTile = 6;   // queries per scoring register tile

using Tile = cpu::AttentionTile;
using cpu::kTileQueries;
using cpu::make_tiles;
using cpu::sink_into_sum;

// Per-thread scratch, sized for one layer's shapes.
struct Scratch {
  std::vector<float> q;       // [16][head_dim]  pre-scaled queries
  std::vector<float> acc;     // [16][v_dim]     running (unnormalized) outputs
  std::vector<float> kt;      // [head_dim][16]  this chunk's K rows of the kv head, transposed
  std::vector<float> v;       // [16][v_dim]     this chunk's V rows of the kv head
  std::vector<float> k;       // [16][head_dim]  this chunk's K rows in f32 (pools of other dtypes)
  std::vector<float> scores;  // [16][16]        per query: scores, then probabilities
  std::vector<float> zeros;   // [head_dim]      stands in for the rows past the last key
};

// scores[t][0..16) = q[t] . kt[:, 0..16) for t < T; q rows are kHeadDim apart. Below 4 queries
// (decode) the dimensions are split over two sets of accumulators: 2T FMA chains alone would
// wait on FMA latency.
template <int T, int64_t kHeadDim>
__attribute__((always_inline)) inline void score_tile(const float* __restrict q, const float* __restrict kt,
                                                      float* __restrict scores) {
  constexpr int kSets = T < 4 ? 2 : 1;
  __m256 lo[kSets][T], hi[kSets][T];
#pragma GCC unroll 8
  for (int a = 0; a < kSets; ++a)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) lo[a][t] = hi[a][t] = _mm256_setzero_ps();
  for (int64_t d = 0; d < kHeadDim; d += kSets) {
#pragma GCC unroll 2
    for (int a = 0; a < kSets; ++a) {
      const float* k = kt + (d + a) * kChunkKeys;
      const __m256 k_lo = _mm256_loadu_ps(k), k_hi = _mm256_loadu_ps(k + 8);
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        const __m256 qb = _mm256_broadcast_ss(q + t * kHeadDim + d + a);
        lo[a][t] = _mm256_fmadd_ps(k_lo, qb, lo[a][t]);
        hi[a][t] = _mm256_fmadd_ps(k_hi, qb, hi[a][t]);
      }
    }
  }
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) {
    if constexpr (kSets == 2) {
      lo[0][t] = _mm256_add_ps(lo[0][t], lo[1][t]);
      hi[0][t] = _mm256_add_ps(hi[0][t], hi[1][t]);
    }
    _mm256_storeu_ps(scores + t * kChunkKeys, lo[0][t]);
    _mm256_storeu_ps(scores + t * kChunkKeys + 8, hi[0][t]);
  }
}

template <int64_t kHeadDim>
void score_queries(const float* q, const float* kt, float* scores, int64_t num_queries) {
  int64_t t = 0;
  for (; t + kScoreTile <= num_queries; t += kScoreTile)
    score_tile<kScoreTile, kHeadDim>(q + t * kHeadDim, kt, scores + t * kChunkKeys);
  const float* qt = q + t * kHeadDim;
  float* st = scores + t * kChunkKeys;
  switch (num_queries - t) {
    case 1:
      score_tile<1, kHeadDim>(qt, kt, st);
      break;
    case 2:
      score_tile<2, kHeadDim>(qt, kt, st);
      break;
    case 3:
      score_tile<3, kHeadDim>(qt, kt, st);
      break;
    case 4:
      score_tile<4, kHeadDim>(qt, kt, st);
      break;
    case 5:
      score_tile<5, kHeadDim>(qt, kt, st);
      break;
    default:
      break;
  }
}

// acc[t] = acc[t] * corrections[t] + sum_{j < n} p[t][j] * v[j] for t < T, 16 dimensions at a time:
// the same register tile as score_tile (6 queries x 2 vectors), with v rows as the panel. Below 4
// queries, even and odd keys go to two sets of accumulators (FMA latency, as in score_tile).
template <int T, int64_t kHeadDim>
__attribute__((always_inline)) inline void pv_tile(const float* __restrict p, const float* __restrict v, int64_t n,
                                                   const float* corrections, float* __restrict acc) {
  constexpr int kSets = T < 4 ? 2 : 1;
  for (int64_t d0 = 0; d0 < kHeadDim; d0 += 16) {
    __m256 lo[kSets][T], hi[kSets][T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const __m256 c = _mm256_set1_ps(corrections[t]);
      lo[0][t] = _mm256_mul_ps(_mm256_loadu_ps(acc + t * kHeadDim + d0), c);
      hi[0][t] = _mm256_mul_ps(_mm256_loadu_ps(acc + t * kHeadDim + d0 + 8), c);
      if constexpr (kSets == 2) lo[1][t] = hi[1][t] = _mm256_setzero_ps();
    }
    int64_t j = 0;
    for (; j + kSets <= n; j += kSets) {
#pragma GCC unroll 2
      for (int a = 0; a < kSets; ++a) {
        const float* v_row = v + (j + a) * kHeadDim + d0;
        const __m256 v_lo = _mm256_loadu_ps(v_row), v_hi = _mm256_loadu_ps(v_row + 8);
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) {
          const __m256 pb = _mm256_broadcast_ss(p + t * kChunkKeys + j + a);
          lo[a][t] = _mm256_fmadd_ps(v_lo, pb, lo[a][t]);
          hi[a][t] = _mm256_fmadd_ps(v_hi, pb, hi[a][t]);
        }
      }
    }
    if (j < n) {  // an odd key count (kSets == 2)
      const __m256 v_lo = _mm256_loadu_ps(v + j * kHeadDim + d0), v_hi = _mm256_loadu_ps(v + j * kHeadDim + d0 + 8);
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        const __m256 pb = _mm256_broadcast_ss(p + t * kChunkKeys + j);
        lo[0][t] = _mm256_fmadd_ps(v_lo, pb, lo[0][t]);
        hi[0][t] = _mm256_fmadd_ps(v_hi, pb, hi[0][t]);
      }
    }
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      if constexpr (kSets == 2) {
        lo[0][t] = _mm256_add_ps(lo[0][t], lo[1][t]);
        hi[0][t] = _mm256_add_ps(hi[0][t], hi[1][t]);
      }
      _mm256_storeu_ps(acc + t * kHeadDim + d0, lo[0][t]);
      _mm256_storeu_ps(acc + t * kHeadDim + d0 + 8, hi[0][t]);
    }
  }
}

template <int64_t kHeadDim>
void pv_queries(const float* p, const float* v, int64_t n, const float* corrections, float* acc, int64_t num_queries) {
  int64_t t = 0;
  for (; t + kScoreTile <= num_queries; t += kScoreTile)
    pv_tile<kScoreTile, kHeadDim>(p + t * kChunkKeys, v, n, corrections + t, acc + t * kHeadDim);
  const float* pt = p + t * kChunkKeys;
  float* at = acc + t * kHeadDim;
  switch (num_queries - t) {
    case 1:
      pv_tile<1, kHeadDim>(pt, v, n, corrections + t, at);
      break;
    case 2:
      pv_tile<2, kHeadDim>(pt, v, n, corrections + t, at);
      break;
    case 3:
      pv_tile<3, kHeadDim>(pt, v, n, corrections + t, at);
      break;
    case 4:
      pv_tile<4, kHeadDim>(pt, v, n, corrections + t, at);
      break;
    case 5:
      pv_tile<5, kHeadDim>(pt, v, n, corrections + t, at);
      break;
    default:
      break;
  }
}

// One K or V row of the pool, in its dtype, as 8 * kNumVecs f32 values in dst.
template <int kNumVecs>
__attribute__((always_inline)) inline void load_kv_row(DType dtype, const uint8_t* src, float* dst) {
  switch (dtype) {
    case DType::F32:
#pragma GCC unroll 8
      for (int v = 0; v < kNumVecs; ++v)
        _mm256_storeu_ps(dst + 8 * v, _mm256_loadu_ps(reinterpret_cast<const float*>(src) + 8 * v));
      return;
    case DType::F16:
#pragma GCC unroll 8
      for (int v = 0; v < kNumVecs; ++v)
        _mm256_storeu_ps(dst + 8 * v, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16 * v))));
      return;
    case DType::BF16:
#pragma GCC unroll 8
      for (int v = 0; v < kNumVecs; ++v) {
        const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16 * v)));
        _mm256_storeu_ps(dst + 8 * v, _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16)));
      }
      return;
    default:  // block-quantized rows (q8_0): the scalar dequantizer, once per row per tile
      ref::dequantize_row(dtype, src, dst, 8 * kNumVecs);
  }
}

// kNumVecs: vectors of 8 per key (head_dim); kValueVecs: per value (v_dim <= head_dim).
template <int kNumVecs, int kValueVecs>
void attend_tile(const float* q_all, float* out_all, const AttentionBatch& batch, const KvLayerView& kv,
                 int64_t num_heads, float scale, const float* sinks, const Tile& tile, Scratch& s) {
  constexpr int64_t kHeadDim = 8 * kNumVecs, kValueDim = 8 * kValueVecs;
  static_assert(kHeadDim % 16 == 0 && kValueDim % 16 == 0);
  const int64_t group = num_heads / kv.num_kv_heads;
  const int64_t num_queries = tile.num_tokens * tile.num_heads;
  // Query i <-> (token tile.token_begin + i / num_heads_in_tile, head kv_head * group + head_begin + i % ...).
  auto query_index = [&](int64_t i) {
    const int64_t t = tile.token_begin + i / tile.num_heads;
    const int64_t h = tile.kv_head * group + tile.head_begin + i % tile.num_heads;
    return t * num_heads + h;
  };
  // Raw pointers: stores through float* could alias the vectors' own fields and force reloads.
  float* __restrict q_buf = s.q.data();
  float* __restrict acc_buf = s.acc.data();
  float* __restrict kt = s.kt.data();
  float* __restrict v_buf = s.v.data();
  float* __restrict k_buf = s.k.data();
  float* __restrict scores = s.scores.data();
  float positions[kTileQueries];
  float window_floors[kTileQueries];  // sliding window: keys at or below this lie before query i's window
  // A finite start (not -inf) keeps exp(old_max - new_max) a number for a query that sees no key yet.
  float running_max[kTileQueries], running_sum[kTileQueries];
  for (int64_t i = 0; i < num_queries; ++i) {
    const float* q_src = q_all + query_index(i) * kHeadDim;
    for (int v = 0; v < kNumVecs; ++v)
      _mm256_storeu_ps(q_buf + i * kHeadDim + 8 * v,
                       _mm256_mul_ps(_mm256_loadu_ps(q_src + 8 * v), _mm256_set1_ps(scale)));
    for (int v = 0; v < kValueVecs; ++v) _mm256_storeu_ps(acc_buf + i * kValueDim + 8 * v, _mm256_setzero_ps());
    positions[i] = float(batch.positions[tile.token_begin + i / tile.num_heads]);
    window_floors[i] = positions[i] - float(kv.window);
    running_max[i] = -1e30f;
    running_sum[i] = 0.0f;
  }

  const int32_t* block_table = batch.block_tables[batch.seq_index[tile.token_begin]];
  const int64_t num_keys = int64_t(batch.positions[tile.token_begin + tile.num_tokens - 1]) + 1;
  // Sliding window: keys from the earliest query's window on; those from the latest query's on
  // are in every query's window. Without one, all keys from 0, none masked below.
  const int64_t first_key =
      kv.window > 0 ? std::max<int64_t>(0, int64_t(batch.positions[tile.token_begin]) + 1 - kv.window) : 0;
  const int64_t in_every_window = kv.window > 0 ? num_keys - kv.window : 0;
  const __m256 key_lanes_lo = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256 key_lanes_hi = _mm256_setr_ps(8, 9, 10, 11, 12, 13, 14, 15);
  auto slot_of = [&](int64_t pos) { return int64_t(block_table[pos / kv.block_size]) * kv.block_size + pos % kv.block_size; };
  for (int64_t key_begin = first_key; key_begin < num_keys; key_begin += kChunkKeys) {
    const int64_t n = std::min<int64_t>(kChunkKeys, num_keys - key_begin);
    // 1. The chunk's K (transposed) and V rows; rows past the last key read as zeros.
    const float* k_rows[kChunkKeys];
    for (int64_t j = 0; j < kChunkKeys; ++j) {
      if (j >= n) {
        k_rows[j] = s.zeros.data();
        continue;
      }
      const int64_t slot = slot_of(key_begin + j);
      if (kv.dtype == DType::F32) {  // transposed straight from the pool
        k_rows[j] = reinterpret_cast<const float*>(kv.k_row(slot, tile.kv_head));
      } else {
        load_kv_row<kNumVecs>(kv.dtype, kv.k_row(slot, tile.kv_head), k_buf + j * kHeadDim);
        k_rows[j] = k_buf + j * kHeadDim;
      }
      load_kv_row<kValueVecs>(kv.dtype, kv.v_row(slot, tile.kv_head), v_buf + j * kValueDim);
    }
    for (int j0 = 0; j0 < kChunkKeys; j0 += 8) {
      for (int v = 0; v < kNumVecs; ++v) {
        __m256 block[8];
#pragma GCC unroll 8
        for (int i = 0; i < 8; ++i) block[i] = _mm256_loadu_ps(k_rows[j0 + i] + 8 * v);
        transpose8x8(block);  // block[d] = dimension 8v + d of keys j0..j0+7
#pragma GCC unroll 8
        for (int d = 0; d < 8; ++d) _mm256_storeu_ps(kt + (8 * v + d) * kChunkKeys + j0, block[d]);
      }
    }

    // 2. scores[i][j] = q[i] . k[j].
    score_queries<kHeadDim>(q_buf, kt, scores, num_queries);

    // 3. online softmax per query, keys past its position (and before its window) masked to -inf.
    float corrections[kTileQueries];
    const __m256 key_pos = _mm256_set1_ps(float(key_begin));
    const __m256 keys_lo = _mm256_add_ps(key_pos, key_lanes_lo), keys_hi = _mm256_add_ps(key_pos, key_lanes_hi);
    const bool mask_window = key_begin < in_every_window;
    for (int64_t i = 0; i < num_queries; ++i) {
      float* row = scores + i * kChunkKeys;
      const __m256 query_pos = _mm256_set1_ps(positions[i]);
      const __m256 minus_inf = _mm256_set1_ps(-INFINITY);
      __m256 visible_lo = _mm256_cmp_ps(keys_lo, query_pos, _CMP_LE_OQ);
      __m256 visible_hi = _mm256_cmp_ps(keys_hi, query_pos, _CMP_LE_OQ);
      if (mask_window) {
        const __m256 window_floor = _mm256_set1_ps(window_floors[i]);
        visible_lo = _mm256_and_ps(visible_lo, _mm256_cmp_ps(keys_lo, window_floor, _CMP_GT_OQ));
        visible_hi = _mm256_and_ps(visible_hi, _mm256_cmp_ps(keys_hi, window_floor, _CMP_GT_OQ));
      }
      const __m256 lo = _mm256_blendv_ps(minus_inf, _mm256_loadu_ps(row), visible_lo);
      const __m256 hi = _mm256_blendv_ps(minus_inf, _mm256_loadu_ps(row + 8), visible_hi);
      const float new_max = std::max(running_max[i], reduce_max(_mm256_max_ps(lo, hi)));
      const __m256 max_b = _mm256_set1_ps(new_max);
      const __m256 p_lo = exp_ps(_mm256_sub_ps(lo, max_b)), p_hi = exp_ps(_mm256_sub_ps(hi, max_b));
      _mm256_storeu_ps(row, p_lo);
      _mm256_storeu_ps(row + 8, p_hi);
      // exp of the max's change, through exp_ps as well: all exps share one rounding behaviour.
      corrections[i] = _mm256_cvtss_f32(exp_ps(_mm256_set1_ps(running_max[i] - new_max)));
      running_max[i] = new_max;
      running_sum[i] = running_sum[i] * corrections[i] + reduce_add(_mm256_add_ps(p_lo, p_hi));
    }

    // 4. acc[i] = acc[i] * correction[i] + sum_j p[i][j] * v[j].
    pv_queries<kValueDim>(scores, v_buf, n, corrections, acc_buf, num_queries);
  }

  for (int64_t i = 0; i < num_queries; ++i) {
    float norm = 1.0f;  // the sink's share: acc / (sum + exp(sink)), both relative to a common max
    if (sinks != nullptr) sink_into_sum(sinks[query_index(i) % num_heads], running_max[i], running_sum[i], norm);
    const __m256 inv_sum = _mm256_set1_ps(norm / running_sum[i]);
    float* out = out_all + query_index(i) * kValueDim;
    const float* acc = acc_buf + i * kValueDim;
    for (int v = 0; v < kValueVecs; ++v)
      _mm256_storeu_ps(out + 8 * v, _mm256_mul_ps(_mm256_loadu_ps(acc + 8 * v), inv_sum));
  }
}

using TileFn = void (*)(const float*, float*, const AttentionBatch&, const KvLayerView&, int64_t, float, const float*,
                        const Tile&, Scratch&);

TileFn tile_fn_for(int64_t head_dim, int64_t v_dim) {
  if (v_dim != head_dim) {  // multi-head latent attention: [latent | rotary key] rows
    if (head_dim == 576 && v_dim == 512) return attend_tile<72, 64>;  // DeepSeek V3 / Kimi K2
    if (head_dim == 96 && v_dim == 64) return attend_tile<12, 8>;     // the tiny test model
    return nullptr;
  }
  switch (head_dim) {
    case 32:
      return attend_tile<4, 4>;
    case 64:
      return attend_tile<8, 8>;
    case 80:
      return attend_tile<10, 10>;
    case 96:
      return attend_tile<12, 12>;
    case 128:
      return attend_tile<16, 16>;
    case 192:
      return attend_tile<24, 24>;
    case 256:
      return attend_tile<32, 32>;
    default:
      return nullptr;
  }
}


}  // namespace

void paged_attention(const float* q, float* out, const AttentionBatch& batch, const KvLayerView& kv, int64_t num_heads,
                     float scale, const float* sinks, ThreadPool& pool) {
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
    scratch.kt.resize(size_t(kv.head_dim * kChunkKeys));
    scratch.v.resize(size_t(kChunkKeys * kv.v_dim()));
    scratch.k.resize(size_t(kChunkKeys * kv.head_dim));
    scratch.scores.resize(size_t(kTileQueries * kChunkKeys));
    scratch.zeros.assign(size_t(kv.head_dim), 0.0f);
    for (int64_t i = next_tile.fetch_add(1, std::memory_order_relaxed); i < num_tiles;
         i = next_tile.fetch_add(1, std::memory_order_relaxed))
      tile_fn(q, out, batch, kv, num_heads, scale, sinks, tiles[size_t(num_tiles - 1 - i)], scratch);
  });
}

}  // namespace llmesh::kernels::avx2

LLMESH_AVX2_END
