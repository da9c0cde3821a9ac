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
  const bool bias = gate_up_bias || down_bias, interleaved = gate_up || gate_up_bias;
  check(t.num_dims() == (bias ? 2 : 3) && t.shape[0] > 0 && (!interleaved || t.shape.back() % 2 == 0),
        "{}: fused expert tensor '{}' has shape {}", weights.model_path(), t.name, t.shape_string());
  // Per expert: `in` rows of `cols` columns (x @ W; a bias is one row), gate and up interleaved.
  const int64_t in = bias ? 1 : t.shape[1], cols = t.shape.back();
  const int64_t out = interleaved ? cols / 2 : cols, stride = interleaved ? 2 : 1;
  const std::string blk = "blk." + std::to_string(layer) + ".";
  for (int64_t e = 0; e < t.shape[0]; ++e) {
    const uint8_t* expert = static_cast<const uint8_t*>(t.data) + size_t(e * in * cols) * element;
    for (int64_t part = 0; part < stride; ++part) {
      Tensor m = new_tensor(weights, t, {out, in});
      transpose_columns(expert, cols, part, stride, m, element);
      if (bias) m.shape = {out};
      const char* projection = !interleaved ? "ffn_down_exps" : part == 0 ? "ffn_gate_exps" : "ffn_up_exps";
      weights.add(blk + projection + "." + std::to_string(e) + (bias ? ".bias" : ".weight"), m);
    }
  }
  return true;
}

}  // namespace llmesh::model
