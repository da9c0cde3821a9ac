// A model's chat template plus the variables HF transformers'
// apply_chat_template passes to it: messages, tools, documents (none),
// add_generation_prompt, bos_token, eos_token, enable_thinking and
// reasoning_effort (each only when set) and any extra template kwargs.
//
// Messages come in OpenAI chat format and are normalized before rendering,
// the way OpenAI-compatible servers do (the golden generator
// tools/gen_template_goldens.py applies the same rules):
//   - content given as a list of {type:"text", text} parts becomes one string,
//     the parts joined with "\n", unless the template renders such a list
//     itself (Gemma 3 iterates over content parts);
//   - tool_calls[].function.arguments are passed as objects (a JSON string is
//     parsed), unless the template fails on object arguments but renders with
//     string ones (DeepSeek-V3 concatenates them), in which case objects are
//     serialized to compact JSON strings.
//   Both probes render a tiny conversation once, at construction.
//   - an empty or null tool list is passed as `tools = none`.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "text/jinja/template.h"

namespace llmesh::text {

struct ChatTemplateOptions {
  bool add_generation_prompt = true;
  std::optional<bool> enable_thinking;
  // low | medium | high: the harmony template's "Reasoning:" line (gpt-oss); other templates ignore it.
  std::optional<std::string> reasoning_effort;
  nlohmann::json extra = nlohmann::json::object();  // extra template kwargs (e.g. date_string)
};

class ChatTemplate {
 public:
  // Parses the template (llmesh::Error "chat_template line N: ..." on syntax errors).
  // `limits` bound each render (jinja/template.h).
  ChatTemplate(std::string source, std::string bos_token, std::string eos_token,
               const jinja::RenderLimits& limits = {});

  // Renders a conversation; llmesh::Error "chat_template line N: ..." on a
  // template runtime error or raise_exception(message).
  std::string render(const nlohmann::json& messages, const nlohmann::json& tools,
                     const ChatTemplateOptions& options) const;
  // Same, keeping JSON key order (tool schemas print in the order given).
  std::string render(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                     const ChatTemplateOptions& options) const;

  // The exact variables render() passes to the template, for tests and debugging.
  nlohmann::ordered_json make_context(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                                      const ChatTemplateOptions& options) const;

  bool wants_string_arguments() const { return wants_string_arguments_; }
  bool accepts_text_parts() const { return accepts_text_parts_; }

 private:
  nlohmann::ordered_json probe_context(const nlohmann::ordered_json& messages) const;
  bool probe_wants_string_arguments() const;
  bool probe_accepts_text_parts() const;

  jinja::Template template_;
  std::string bos_token_;
  std::string eos_token_;
  bool wants_string_arguments_ = false;
  bool accepts_text_parts_ = false;
};

}  // namespace llmesh::text
