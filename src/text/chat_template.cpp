#include "text/chat_template.h"

#include "core/error.h"

namespace llmesh::text {
namespace {

using OrderedJson = nlohmann::ordered_json;

// A conversation with one assistant tool call, rendered once per template to
// learn whether it takes tool-call arguments as objects or as JSON strings.
OrderedJson probe_messages(const OrderedJson& arguments) {
  OrderedJson call = {{"id", "probe0001"},
                      {"type", "function"},
                      {"function", {{"name", "probe_tool"}, {"arguments", arguments}}}};
  return OrderedJson::array({{{"role", "user"}, {"content", "probe"}},
                             {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", OrderedJson::array({call})}}});
}

OrderedJson normalize_content(const OrderedJson& content, bool keep_text_parts) {
  if (!content.is_array() || keep_text_parts) return content;
  std::string joined;
  bool first = true;
  for (const auto& part : content) {
    if (!part.is_object() || !part.contains("type") || part["type"] != "text" || !part.contains("text") ||
        !part["text"].is_string())
      return content;  // not text-only
    if (!first) joined += "\n";
    first = false;
    joined += part["text"].get<std::string>();
  }
  return joined;
}

OrderedJson normalize_messages(const OrderedJson& messages, bool string_arguments, bool keep_text_parts) {
  check(messages.is_array(), "chat template: messages must be a JSON array");
  OrderedJson out = OrderedJson::array();
  for (const auto& message : messages) {
    check(message.is_object(), "chat template: each message must be a JSON object");
    OrderedJson normalized = message;
    if (normalized.contains("content")) normalized["content"] = normalize_content(normalized["content"], keep_text_parts);
    if (normalized.contains("tool_calls") && normalized["tool_calls"].is_array()) {
      for (auto& call : normalized["tool_calls"]) {
        if (!call.is_object() || !call.contains("function") || !call["function"].is_object()) continue;
        auto& function = call["function"];
        if (!function.contains("arguments")) continue;
        auto& arguments = function["arguments"];
        if (string_arguments) {
          if (!arguments.is_string()) arguments = arguments.dump();
        } else if (arguments.is_string()) {
          OrderedJson parsed = OrderedJson::parse(arguments.get<std::string>(), nullptr, false);
          if (!parsed.is_discarded() && parsed.is_object()) arguments = std::move(parsed);
        }
      }
    }
    out.push_back(std::move(normalized));
  }
  return out;
}

}  // namespace

ChatTemplate::ChatTemplate(std::string source, std::string bos_token, std::string eos_token,
                           const jinja::RenderLimits& limits)
    : template_(std::move(source), "chat_template"), bos_token_(std::move(bos_token)), eos_token_(std::move(eos_token)) {
  template_.set_limits(limits);
  wants_string_arguments_ = probe_wants_string_arguments();
  accepts_text_parts_ = probe_accepts_text_parts();
}

OrderedJson ChatTemplate::probe_context(const OrderedJson& messages) const {
  return {{"messages", messages},         {"tools", nullptr},        {"documents", nullptr},
          {"add_generation_prompt", false}, {"bos_token", bos_token_}, {"eos_token", eos_token_}};
}

bool ChatTemplate::probe_accepts_text_parts() const {
  const std::string marker = "llmesh_probe_text_part";
  OrderedJson parts = OrderedJson::array({{{"type", "text"}, {"text", marker}}});
  OrderedJson messages = OrderedJson::array({{{"role", "user"}, {"content", parts}}});
  try {
    std::string rendered = template_.render(probe_context(messages));
    // A template that prints the list itself (str() or tojson of it) does not understand parts.
    return rendered.find(marker) != std::string::npos && rendered.find("'type'") == std::string::npos &&
           rendered.find("\"type\"") == std::string::npos;
  } catch (const Error&) {
    return false;
  }
}

bool ChatTemplate::probe_wants_string_arguments() const {
  auto renders = [&](const OrderedJson& arguments) {
    try {
      template_.render(probe_context(probe_messages(arguments)));
      return true;
    } catch (const Error&) {
      return false;
    }
  };
  return !renders(OrderedJson{{"probe_arg", "probe_value"}}) && renders("{\"probe_arg\": \"probe_value\"}");
}

OrderedJson ChatTemplate::make_context(const OrderedJson& messages, const OrderedJson& tools,
                                       const ChatTemplateOptions& options) const {
  OrderedJson context = OrderedJson::object();
  context["messages"] = normalize_messages(messages, wants_string_arguments_, accepts_text_parts_);
  bool has_tools = tools.is_array() && !tools.empty();
  context["tools"] = has_tools ? tools : OrderedJson(nullptr);
  context["documents"] = nullptr;
  context["add_generation_prompt"] = options.add_generation_prompt;
  context["bos_token"] = bos_token_;
  context["eos_token"] = eos_token_;
  if (options.enable_thinking) context["enable_thinking"] = *options.enable_thinking;
  if (options.reasoning_effort) context["reasoning_effort"] = *options.reasoning_effort;
  if (options.extra.is_object())
    for (auto it = options.extra.begin(); it != options.extra.end(); ++it) context[it.key()] = OrderedJson(it.value());
  return context;
}

std::string ChatTemplate::render(const OrderedJson& messages, const OrderedJson& tools,
                                 const ChatTemplateOptions& options) const {
  return template_.render(make_context(messages, tools, options));
}

std::string ChatTemplate::render(const nlohmann::json& messages, const nlohmann::json& tools,
                                 const ChatTemplateOptions& options) const {
  return render(OrderedJson(messages), OrderedJson(tools), options);
}

}  // namespace llmesh::text
