// Reference paged attention: gathers one (token, head)'s keys position by position
// through the block table, then a plain two-pass softmax.
#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "kernels/ref/ref_ops.h"

namespace llmesh::kernels::ref {

namespace {
// Pool offset (in floats) of position `pos` of one sequence, kv head `kv_head`.
int64_t slot_offset(const KvLayerView& kv, const int32_t* block_table, int64_t pos, int64_t kv_head) {
  const int64_t block_id = block_table[pos / kv.block_size];
  return block_id * kv.block_stride() + (pos % kv.block_size) * kv.slot_stride() + kv_head * kv.head_dim;
}
}  // namespace

void paged_attention(const float* q, float* out, const AttentionBatch& batch, const KvLayerView& kv,
                     int64_t num_heads, float scale, ThreadPool& pool) {
  check(num_heads % kv.num_kv_heads == 0, "attention: {} heads is not a multiple of {} kv heads", num_heads,
        kv.num_kv_heads);
  const int64_t group = num_heads / kv.num_kv_heads, head_dim = kv.head_dim;
  pool.parallel_for(batch.num_tokens * num_heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> scores;  // [positions[t] + 1]
    std::vector<double> acc(static_cast<size_t>(head_dim));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t t = task / num_heads, h = task % num_heads, kv_head = h / group;
      const int32_t* table = batch.block_tables[batch.seq_index[t]];
      const int64_t num_keys = int64_t(batch.positions[t]) + 1;
      const float* q_vec = q + task * head_dim;
      scores.assign(size_t(num_keys), 0.0);
      double max_score = -INFINITY;
      for (int64_t j = 0; j < num_keys; ++j) {
        const float* k_vec = kv.k + slot_offset(kv, table, j, kv_head);
        double dot = 0.0;
        for (int64_t d = 0; d < head_dim; ++d) dot += double(q_vec[d]) * double(k_vec[d]);
        scores[size_t(j)] = dot * double(scale);
        max_score = std::max(max_score, scores[size_t(j)]);
      }
      double sum = 0.0;
      for (double& s : scores) {
        s = std::exp(s - max_score);
        sum += s;
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t j = 0; j < num_keys; ++j) {
        const float* v_vec = kv.v + slot_offset(kv, table, j, kv_head);
        for (int64_t d = 0; d < head_dim; ++d) acc[size_t(d)] += scores[size_t(j)] * double(v_vec[d]);
      }
      float* out_vec = out + task * head_dim;
      for (int64_t d = 0; d < head_dim; ++d) out_vec[d] = float(acc[size_t(d)] / sum);
    }
  });
}

void store_kv(const float* k_new, const float* v_new, const int64_t* slot_mapping, int64_t num_tokens,
              const KvLayerView& kv) {
  const int64_t slot_floats = kv.slot_stride();
  for (int64_t t = 0; t < num_tokens; ++t) {
    const int64_t slot = slot_mapping[t];
    if (slot < 0) continue;
    std::memcpy(kv.k + slot * slot_floats, k_new + t * slot_floats, size_t(slot_floats) * sizeof(float));
    std::memcpy(kv.v + slot * slot_floats, v_new + t * slot_floats, size_t(slot_floats) * sizeof(float));
  }
}

}  // namespace llmesh::kernels::ref
