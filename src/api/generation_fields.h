// Generation fields whose wire names and rules agree between the protocol
// parsers, read into GenerationParams. OpenAI chat completions and the
// Responses API read all of parse_sampling_fields; Anthropic Messages shares
// top_p (its temperature stops at 1 and its top_k has no -1).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "api/json_fields.h"
#include "api/openai_request.h"

namespace llmesh::api {

// The largest max_tokens / max_output_tokens any protocol accepts.
inline constexpr int64_t kMaxOutputTokensLimit = int64_t(1) << 40;

// `model` (a string; "" when absent).
template <typename Json>
std::string model_field(const Json& body) {
  const Json* model = field(body, "model");
  if (!model) return "";
  if (!model->is_string()) fail_param("model", "'model' must be a string, got {}", model->type_name());
  return model->template get<std::string>();
}

// `top_p`, in (0, 1].
template <typename Json>
std::optional<float> top_p_field(const Json& body) {
  const auto top_p = number_field(body, "top_p", 0.0, 1.0);
  if (!top_p) return std::nullopt;
  if (*top_p <= 0.0) fail_param("top_p", "'top_p' must be greater than 0, got {}", *top_p);
  return float(*top_p);
}

// The llmesh extension `loop_guard`: true / false, or {"tokens": K, "max_period": P}
// (an object turns the guard on; a member it leaves out keeps the server's value).
template <typename Json>
LoopGuardRequest loop_guard_field(const Json& body) {
  LoopGuardRequest guard;
  const Json* v = field(body, "loop_guard");
  if (!v) return guard;
  if (v->is_boolean()) {
    guard.enabled = v->template get<bool>();
    return guard;
  }
  if (!v->is_object()) {
    fail_param("loop_guard", "'loop_guard' must be a boolean or an object {{tokens, max_period}}, got {}",
               v->type_name());
  }
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (it.key() != "tokens" && it.key() != "max_period")
      fail_param("loop_guard", "'loop_guard' takes 'tokens' and 'max_period'; got '{}'", std::string(it.key()));
  }
  guard.enabled = true;
  auto member = [&](const char* key, int64_t min) -> std::optional<int64_t> {
    constexpr int64_t kMax = int64_t(1) << 20;
    const Json* m = field(*v, key);
    if (!m) return std::nullopt;
    if (!m->is_number_integer() || m->template get<int64_t>() < min || m->template get<int64_t>() > kMax) {
      fail_param(std::string("loop_guard.") + key, "'loop_guard.{}' must be an integer from {} to {}, got {}", key,
                 min, kMax, m->dump());
    }
    return m->template get<int64_t>();
  };
  guard.window_tokens = member("tokens", 2);
  if (auto p = member("max_period", 1)) guard.max_period = int32_t(*p);
  return guard;
}

// temperature (0-2), top_p, top_k (-1 = off), seed, and the llmesh extensions ignore_eos and loop_guard; stream.
template <typename Json>
void parse_sampling_fields(const Json& body, GenerationParams& p) {
  if (auto t = number_field(body, "temperature", 0.0, 2.0)) p.temperature = float(*t);
  if (auto t = top_p_field(body)) p.top_p = *t;
  if (auto k = integer_field(body, "top_k", -1, int64_t(1) << 30)) p.top_k = int32_t(*k < 0 ? 0 : *k);
  if (auto s = integer_field(body, "seed", INT64_MIN, INT64_MAX)) p.seed = uint64_t(*s);
  p.ignore_eos = bool_field(body, "ignore_eos").value_or(false);
  p.stream = bool_field(body, "stream").value_or(false);
  p.loop_guard = loop_guard_field(body);
}

}  // namespace llmesh::api
