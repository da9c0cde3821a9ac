// libFuzzer target: the Jinja chat-template engine (lexer, parser,
// interpreter, filters, methods). Input: the template source, then a NUL byte,
// then the render context as JSON (an object; without a NUL or with a context
// that is not an object, a small conversation with tools is used). The
// template is rendered as given (jinja::Template) and, when the context has
// `messages`, through text::ChatTemplate as the server does (normalization
// probes, apply_chat_template variables).
// Templates and contexts that are wrong must end in llmesh::Error; hostile
// ones must stop at the render limits (jinja/template.h) instead of hanging or
// exhausting memory. Anything else (a crash, a sanitizer report, another
// exception, a timeout, an out-of-memory) is a bug.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "core/error.h"
#include "text/chat_template.h"
#include "text/jinja/template.h"

namespace {

using OJson = nlohmann::ordered_json;

const OJson& default_context() {
  static const OJson context = OJson::parse(R"({
    "messages": [
      {"role": "system", "content": "You are helpful."},
      {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
      {"role": "assistant", "content": "", "reasoning_content": "Use the tool.",
       "tool_calls": [{"id": "call_1", "type": "function",
                       "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "18C"},
      {"role": "user", "content": "Thanks"}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
    "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>", "enable_thinking": true})");
  return context;
}

// Smaller than the server's limits so that runaway templates stop within
// milliseconds under the sanitizers; the checks are the same code.
llmesh::text::jinja::RenderLimits fuzz_limits() {
  llmesh::text::jinja::RenderLimits limits;
  limits.max_iterations = 20000;
  limits.max_output_bytes = 1 << 20;
  return limits;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string source(input.substr(0, nul));
  OJson context = default_context();
  if (nul != std::string_view::npos) {
    OJson parsed = OJson::parse(input.substr(nul + 1), nullptr, /*allow_exceptions=*/false);
    if (parsed.is_object()) context = std::move(parsed);
  }
  try {
    llmesh::text::jinja::Template tmpl(source, "fuzz_template");
    tmpl.set_limits(fuzz_limits());
    volatile size_t sink = tmpl.render(context).size();
    (void)sink;
  } catch (const llmesh::Error&) {
  }
  const auto messages = context.find("messages");
  if (messages == context.end()) return 0;
  try {
    llmesh::text::ChatTemplate chat_template(source, "<s>", "</s>", fuzz_limits());
    llmesh::text::ChatTemplateOptions options;
    options.enable_thinking = context.value("enable_thinking", false);
    const auto tools = context.find("tools");
    volatile size_t sink =
        chat_template.render(*messages, tools == context.end() ? OJson() : *tools, options).size();
    (void)sink;
  } catch (const llmesh::Error&) {
  }
  return 0;
}
