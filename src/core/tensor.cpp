#include "core/tensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"

namespace llmesh {

int64_t Tensor::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Tensor Tensor::slice_rows(int64_t begin, int64_t end) const {
  check(num_dims() == 2 && 0 <= begin && begin <= end && end <= shape[0],
        "cannot slice rows [{}, {}) of tensor {} {}", begin, end, name, shape_string());
  Tensor t = *this;
  t.shape[0] = end - begin;
  t.data = row(begin);
  return t;
}

Tensor Tensor::index(int64_t i) const {
  check(num_dims() >= 2 && 0 <= i && i < shape[0], "cannot index {} of tensor {} {}", i, name,
        shape_string());
  Tensor t = *this;
  t.shape.erase(t.shape.begin());
  t.data = static_cast<const uint8_t*>(data) + size_t(i) * t.num_bytes();
  t.name = fmt::format("{}[{}]", name, i);
  return t;
}

std::string Tensor::shape_string() const { return fmt::format("[{}]", fmt::join(shape, ", ")); }

}  // namespace llmesh
