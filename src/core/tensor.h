// A non-owning view of a tensor: dtype, shape, pointer.
//
// Shapes are outermost-first (PyTorch order): a linear layer's weight is
// {out_features, in_features} and row r holds the weights of output r.
// (GGUF lists dims innermost-first; its reader reverses them.) Rows are
// contiguous; quantized rows are whole blocks. Views over memory-mapped files
// are how weights live: nothing is copied unless it is converted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace llmesh {

enum class Device : uint8_t { Cpu };

struct Tensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const void* data = nullptr;
  Device device = Device::Cpu;

  int64_t num_dims() const { return int64_t(shape.size()); }
  int64_t num_elements() const;
  int64_t cols() const { return shape.empty() ? 1 : shape.back(); }
  int64_t rows() const { return cols() == 0 ? 0 : num_elements() / cols(); }
  size_t row_bytes() const { return dtype_row_bytes(dtype, cols()); }
  size_t num_bytes() const { return size_t(rows()) * row_bytes(); }
  const uint8_t* row(int64_t r) const { return static_cast<const uint8_t*>(data) + size_t(r) * row_bytes(); }
  const float* f32() const { return static_cast<const float*>(data); }

  // Rows [begin, end) of a 2-D tensor: a column-parallel shard of a linear layer.
  Tensor slice_rows(int64_t begin, int64_t end) const;
  // Element i of the outermost dim (e.g. one expert of a stacked {experts, out, in} tensor).
  Tensor index(int64_t i) const;
  std::string shape_string() const;  // "[1024, 3072]"
};

}  // namespace llmesh
