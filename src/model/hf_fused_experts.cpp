#include "model/hf_fused_experts.h"

#include <cstring>
#include <memory>
#include <new>

#include "core/error.h"

namespace llmesh::model {

namespace {

// A 64-byte aligned buffer of `bytes`, owned by the store.
uint8_t* new_buffer(WeightStore& weights, size_t bytes) {
  std::shared_ptr<uint8_t[]> buffer(new (std::align_val_t(64)) uint8_t[bytes],
                                    [](uint8_t* p) { ::operator delete[](p, std::align_val_t(64)); });
  weights.keep_buffer(buffer);
  return buffer.get();
}

// A tensor of `shape` in t's dtype over a new buffer.
Tensor new_tensor(WeightStore& weights, const Tensor& t, std::vector<int64_t> shape) {
  Tensor out;
  out.dtype = t.dtype;
  out.shape = std::move(shape);
  out.data = new_buffer(weights, out.num_bytes());
  return out;
}

// out[r][c] = in[first + c * stride][r] for the rows of `out` ({rows, cols}): a transposed
// selection of every stride-th column of `in` ({in_rows, in_cols}), element by element.
void transpose_columns(const uint8_t* in, int64_t in_cols, int64_t first, int64_t stride, Tensor& out,
                       size_t element) {
  auto* dst = static_cast<uint8_t*>(const_cast<void*>(out.data));
  const int64_t rows = out.shape[0], cols = out.shape[1];
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(dst + size_t(r * cols + c) * element, in + size_t(c * in_cols + first + r * stride) * element, element);
}

}  // namespace

bool add_hf_fused_experts(const Tensor& t, int64_t layer, WeightStore& weights) {
  const std::string prefix = "model.layers." + std::to_string(layer) + ".mlp.experts.";
  if (t.name.rfind(prefix, 0) != 0) return false;
  const std::string leaf = t.name.substr(prefix.size());
  const bool gate_up = leaf == "gate_up_proj", down = leaf == "down_proj";
  const bool gate_up_bias = leaf == "gate_up_proj_bias", down_bias = leaf == "down_proj_bias";
  const auto ends_with = [&](const char* suffix) {
    const size_t n = std::strlen(suffix);
    return leaf.size() > n && leaf.compare(leaf.size() - n, n, suffix) == 0;
  };
  if (ends_with("_blocks") || ends_with("_scales")) {
    fail("{}: tensor '{}' is an MXFP4 expert block, which llmesh cannot read yet; use a BF16 conversion of the "
         "checkpoint (or a GGUF of it)", weights.model_path(), t.name);
  }
  if (!gate_up && !down && !gate_up_bias && !down_bias) return false;
  check(dtype_block_size(t.dtype) == 1, "{}: fused expert tensor '{}' is {}; llmesh reads it in f32, f16 or bf16",
        weights.model_path(), t.name, dtype_name(t.dtype));
  const size_t element = dtype_row_bytes(t.dtype, 1);
  const std::string blk = "blk." + std::to_string(layer) + ".";
  const int64_t matrix_dims = gate_up || down ? 3 : 2;
  check(t.num_dims() == matrix_dims && t.shape[0] > 0 && ((!gate_up && !gate_up_bias) || t.shape.back() % 2 == 0),
        "{}: fused expert tensor '{}' has shape {}", weights.model_path(), t.name, t.shape_string());
  const int64_t num_experts = t.shape[0];
  for (int64_t e = 0; e < num_experts; ++e) {
    const std::string id = "." + std::to_string(e) + ".";
    const uint8_t* expert = static_cast<const uint8_t*>(t.data) + size_t(e) * t.index(0).num_bytes();
    if (gate_up || down) {
      const int64_t in = t.shape[1], cols = t.shape[2];  // x @ W: in rows of out columns
      const int64_t out = gate_up ? cols / 2 : cols, stride = gate_up ? 2 : 1;
      for (int part = 0; part < (gate_up ? 2 : 1); ++part) {
        Tensor m = new_tensor(weights, t, {out, in});
        transpose_columns(expert, cols, part, stride, m, element);
        weights.add(blk + (down ? "ffn_down_exps" : part == 0 ? "ffn_gate_exps" : "ffn_up_exps") + id + "weight", m);
      }
    } else {
      const int64_t cols = t.shape[1];
      const int64_t out = gate_up_bias ? cols / 2 : cols, stride = gate_up_bias ? 2 : 1;
      for (int part = 0; part < (gate_up_bias ? 2 : 1); ++part) {
        Tensor b = new_tensor(weights, t, {out});
        auto* dst = static_cast<uint8_t*>(const_cast<void*>(b.data));
        for (int64_t i = 0; i < out; ++i)
          std::memcpy(dst + size_t(i) * element, expert + size_t(part + i * stride) * element, element);
        weights.add(blk + (down_bias ? "ffn_down_exps" : part == 0 ? "ffn_gate_exps" : "ffn_up_exps") + id + "bias", b);
      }
    }
  }
  return true;
}

}  // namespace llmesh::model
