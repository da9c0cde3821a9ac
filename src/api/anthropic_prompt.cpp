#include "api/anthropic_prompt.h"

#include "api/api_error.h"
#include "core/error.h"

namespace llmesh::api {

ChatTemplateOptions messages_template_options(const MessagesRequest& request) {
  ChatTemplateOptions options;
  options.add_generation_prompt = true;
  // Always explicit: a template that knows the switch must not fall back to its own default.
  options.enable_thinking = request.enable_thinking;
  return options;
}

std::string render_messages_prompt(const ChatTemplate& chat_template, const MessagesRequest& request) {
  try {
    return chat_template.render(request.messages, request.tools, messages_template_options(request)) +
           request.assistant_prefill;
  } catch (const Error& e) {
    throw ApiError(400, "invalid_request_error", fmt::format("messages: the chat template failed: {}", e.what()),
                   "messages");
  }
}

}  // namespace llmesh::api
