// How the next token is chosen. Defaults mean plain sampling at temperature 1;
// temperature 0 means greedy. Fields left unset by a request fall back to the
// model's generation_config.json.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace llmesh::engine {

struct SamplingParams {
  float temperature = 1.0f;  // 0 = greedy (argmax)
  int32_t top_k = 0;         // 0 = off
  float top_p = 1.0f;        // 1 = off
  float min_p = 0.0f;        // 0 = off; keeps tokens with p >= min_p * p_max
  float repetition_penalty = 1.0f;  // >1 discourages tokens already in prompt or output (divides positive logits)
  float presence_penalty = 0.0f;    // subtracted once from tokens already generated
  float frequency_penalty = 0.0f;   // subtracted per occurrence in the generated tokens
  std::optional<uint64_t> seed;     // same seed => same tokens
};

}  // namespace llmesh::engine
