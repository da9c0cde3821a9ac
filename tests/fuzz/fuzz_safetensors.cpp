// libFuzzer target: arbitrary bytes as a safetensors file (header JSON, dtypes,
// shapes, offsets), plus the HF tensor-name mapping of every name it holds.
#include <cstdint>

#include "core/error.h"
#include "format/safetensors.h"
#include "model/hf_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const llmesh::format::SafetensorsFile file = llmesh::format::SafetensorsFile::parse(data, size, "fuzz.safetensors");
    volatile uint32_t sink = 0;
    for (const llmesh::Tensor& t : file.tensors()) {
      const auto* p = static_cast<const uint8_t*>(t.data);
      const size_t n = t.num_bytes();
      if (n > 0) sink = sink + p[0] + p[n - 1];
      (void)llmesh::model::hf_tensor_to_canonical(t.name);
    }
  } catch (const llmesh::Error&) {
  }
  return 0;
}
