#include "api/anthropic_prompt.h"

#include "api/generation_pipeline.h"

namespace llmesh::api {

std::string render_messages_prompt(const text::ChatTemplate& chat_template, const MessagesRequest& request) {
  return render_prompt(chat_template, to_generation_request(request));
}

}  // namespace llmesh::api
