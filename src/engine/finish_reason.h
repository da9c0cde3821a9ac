// Why a generation ended. Maps onto OpenAI `finish_reason` and Anthropic `stop_reason`.
#pragma once

#include <string_view>

namespace llmesh::engine {

// Repetition: the loop guard (repetition_guard.h) ended a generation stuck in a loop.
enum class FinishReason { None, Eos, Length, StopSequence, Aborted, Repetition };

inline std::string_view openai_finish_reason(FinishReason r) {
  switch (r) {
    case FinishReason::Eos:
    case FinishReason::StopSequence:
    case FinishReason::Repetition: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::Aborted: return "abort";
    case FinishReason::None: break;
  }
  return "";
}

}  // namespace llmesh::engine
