// Helpers shared by the KV tests.
#pragma once

#include <cstdint>
#include <vector>

namespace llmesh::testing {

// The tokens start, start + 1, ..., start + n - 1.
inline std::vector<int32_t> toks(int32_t start, int n) {
  std::vector<int32_t> t;
  for (int i = 0; i < n; ++i) t.push_back(start + i);
  return t;
}

}  // namespace llmesh::testing
