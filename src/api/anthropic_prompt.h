// The prompt of an Anthropic Messages request: its messages and tools through
// the model's chat template, then any assistant prefill. /v1/messages and
// /v1/messages/count_tokens both call this, so count_tokens is exact.
#pragma once

#include <string>

#include "api/anthropic_request.h"
#include "text/chat_template.h"

namespace llmesh::api {

ChatTemplateOptions messages_template_options(const MessagesRequest& request);

// ApiError 400 when the template fails (raise_exception, no user turn, …).
std::string render_messages_prompt(const ChatTemplate& chat_template, const MessagesRequest& request);

}  // namespace llmesh::api
