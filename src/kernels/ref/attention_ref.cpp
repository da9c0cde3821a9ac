// Reference paged attention: gathers one (token, head)'s keys position by position
// through the block table, then a plain two-pass softmax. A sliding window starts the
// keys at the window's first position; an attention sink adds to the softmax's denominator.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "kernels/ref/ref_ops.h"

namespace llmesh::kernels::ref {

namespace {
// Pool slot of position `pos` of the sequence whose block table is `block_table`.
int64_t slot_of(const KvLayerView& kv, const int32_t* block_table, int64_t pos) {
  return int64_t(block_table[pos / kv.block_size]) * kv.block_size + pos % kv.block_size;
}
}  // namespace

void paged_attention(const float* q, float* out, const AttentionBatch& batch, const KvLayerView& kv,
                     int64_t num_heads, float scale, const float* sinks, ThreadPool& pool) {
  check(num_heads % kv.num_kv_heads == 0, "attention: {} heads is not a multiple of {} kv heads", num_heads,
        kv.num_kv_heads);
  const int64_t group = num_heads / kv.num_kv_heads, head_dim = kv.head_dim, v_dim = kv.v_dim();
  check(v_dim <= head_dim && (v_dim == head_dim || kv.v == kv.k),
        "attention: values of {} dims need to be the start of the {}-dim K rows", v_dim, head_dim);
  pool.parallel_for(batch.num_tokens * num_heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> scores;  // [num_keys - first_key]
    std::vector<double> acc(static_cast<size_t>(v_dim));
    std::vector<float> row(static_cast<size_t>(head_dim));  // one K or V row in f32
    for (int64_t task = begin; task < end; ++task) {
      const int64_t t = task / num_heads, h = task % num_heads, kv_head = h / group;
      const int32_t* table = batch.block_tables[batch.seq_index[t]];
      const int64_t num_keys = int64_t(batch.positions[t]) + 1;
      const int64_t first_key = kv.window > 0 ? std::max<int64_t>(0, num_keys - kv.window) : 0;
      const float* q_vec = q + task * head_dim;
      scores.assign(size_t(num_keys - first_key), 0.0);
      double max_score = -INFINITY;
      for (int64_t j = first_key; j < num_keys; ++j) {
        dequantize_row(kv.dtype, kv.k_row(slot_of(kv, table, j), kv_head), row.data(), head_dim);
        double dot = 0.0;
        for (int64_t d = 0; d < head_dim; ++d) dot += double(q_vec[d]) * double(row[size_t(d)]);
        scores[size_t(j - first_key)] = dot * double(scale);
        max_score = std::max(max_score, scores[size_t(j - first_key)]);
      }
      // A sink is one more logit in the denominator, with no value.
      if (sinks != nullptr) max_score = std::max(max_score, double(sinks[h]));
      double sum = sinks != nullptr ? std::exp(double(sinks[h]) - max_score) : 0.0;
      for (double& s : scores) {
        s = std::exp(s - max_score);
        sum += s;
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t j = first_key; j < num_keys; ++j) {
        dequantize_row(kv.dtype, kv.v_row(slot_of(kv, table, j), kv_head), row.data(), v_dim);
        for (int64_t d = 0; d < v_dim; ++d) acc[size_t(d)] += scores[size_t(j - first_key)] * double(row[size_t(d)]);
      }
      float* out_vec = out + task * v_dim;
      for (int64_t d = 0; d < v_dim; ++d) out_vec[d] = float(acc[size_t(d)] / sum);
    }
  });
}

namespace {
// One f32 row into a KV row of `dtype`. f16 saturates at its largest finite value (65504): a
// key past it would otherwise become inf and turn every score of its head into NaN.
void store_row(DType dtype, const float* src, uint8_t* dst, int64_t n) {
  switch (dtype) {
    case DType::F32:
      std::memcpy(dst, src, size_t(n) * sizeof(float));
      return;
    case DType::F16: {
      auto* h = reinterpret_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) h[i] = f32_to_f16(std::clamp(src[i], -65504.0f, 65504.0f));
      return;
    }
    case DType::BF16: {
      auto* h = reinterpret_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) h[i] = f32_to_bf16(src[i]);
      return;
    }
    case DType::Q8_0:
      quantize_row_q8_0(src, reinterpret_cast<BlockQ8_0*>(dst), n);
      return;
    default:
      fail("store_kv: {} is not a KV cache dtype", dtype_name(dtype));
  }
}
}  // namespace

void store_kv(const float* k_new, const float* v_new, const int64_t* slot_mapping, int64_t num_tokens,
              const KvLayerView& kv) {
  const int64_t row_floats = kv.head_dim, slot_floats = kv.num_kv_heads * kv.head_dim;
  for (int64_t t = 0; t < num_tokens; ++t) {
    const int64_t slot = slot_mapping[t];
    if (slot < 0) continue;
    for (int64_t h = 0; h < kv.num_kv_heads; ++h) {
      store_row(kv.dtype, k_new + t * slot_floats + h * row_floats, kv.k_row(slot, h), row_floats);
      if (v_new != nullptr)
        store_row(kv.dtype, v_new + t * slot_floats + h * row_floats, kv.v_row(slot, h), row_floats);
    }
  }
}

}  // namespace llmesh::kernels::ref
