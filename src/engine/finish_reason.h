// Why a generation ended. Maps onto OpenAI `finish_reason` and Anthropic `stop_reason`.
#pragma once

#include <string_view>

namespace llmesh::engine {

enum class FinishReason { None, Eos, Length, StopSequence, Aborted };

inline std::string_view openai_finish_reason(FinishReason r) {
  switch (r) {
    case FinishReason::Eos:
    case FinishReason::StopSequence: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::Aborted: return "abort";
    case FinishReason::None: break;
  }
  return "";
}

}  // namespace llmesh::engine
