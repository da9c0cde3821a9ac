// An Anthropic Messages request as the normalized GenerationRequest, and its
// prompt: its messages and tools through the model's chat template, then any
// assistant prefill. /v1/messages and /v1/messages/count_tokens both go
// through this, so count_tokens is exact.
#pragma once

#include <string>

#include "api/anthropic_request.h"
#include "api/generation_request.h"
#include "text/chat_template.h"

namespace llmesh::api {

// ApiError 400 when the template fails (raise_exception, no user turn, …).
std::string render_messages_prompt(const text::ChatTemplate& chat_template, const MessagesRequest& request);

}  // namespace llmesh::api
