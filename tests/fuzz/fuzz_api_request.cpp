// libFuzzer target: arbitrary bytes as a request body of each protocol,
// through its parser and into the normalized GenerationRequest:
//   first byte 'o'  POST /v1/chat/completions  parse_chat_completion_request + to_generation_request
//                   (and the same body as /v1/completions)
//              'a'  POST /v1/messages          parse_messages_request(Create) + to_generation_request
//                                              + anthropic_cache_ttl_seconds
//              'c'  POST /v1/messages/count_tokens  parse_messages_request(CountTokens) + to_generation_request
//              'r'  POST /v1/responses         parse_responses_request (with a response store) + to_generation_request
//              other: all four protocols on the rest.
// One target for the three protocols (not one each): they share the body
// parser and the typed field readers (json_fields.h), a Claude Code body sent
// as a chat completion is as interesting as the real thing, and one corpus
// lets the mutator carry structures found for one protocol to the others.
// Bad input must end in api::ApiError (or llmesh::Error); anything else (a
// crash, a sanitizer report, another exception) is a bug.
#include <cstdint>
#include <string>

#include "api/anthropic_request.h"
#include "api/api_error.h"
#include "api/cache_retention.h"
#include "api/generation_request.h"
#include "api/openai_request.h"
#include "api/responses_request.h"
#include "api/responses_store.h"
#include "core/error.h"

namespace {

using namespace llmesh::api;

// Reads what a handler reads next, so the sanitizers see the normalized request in full.
void consume(const GenerationRequest& request) {
  volatile size_t sink = request.messages.dump().size() + request.tools.dump().size();
  sink = sink + request.constraint.schema.dump().size() + request.constraint.tools.dump().size();
  sink = sink + request.template_kwargs.dump().size() + request.assistant_prefill.size();
  (void)request.params.sampling(llmesh::model::GenerationDefaults{});
  (void)sink;
}

void chat(const std::string& body) {
  try {
    const ChatCompletionRequest request = parse_chat_completion_request(parse_json_body(body));
    consume(to_generation_request(request, body));
  } catch (const ApiError&) {
  } catch (const llmesh::Error&) {
  }
  try {
    (void)parse_completion_request(parse_json_body(body));
  } catch (const ApiError&) {
  } catch (const llmesh::Error&) {
  }
}

void messages(const std::string& body, MessagesEndpoint endpoint) {
  try {
    const nlohmann::ordered_json json = parse_ordered_json_body(body);
    const MessagesRequest request = parse_messages_request(json, endpoint);
    consume(to_generation_request(request));
    if (endpoint == MessagesEndpoint::Create) (void)anthropic_cache_ttl_seconds(json);
  } catch (const ApiError&) {
  } catch (const llmesh::Error&) {
  }
}

void responses(const std::string& body) {
  // A store holding one earlier response, so previous_response_id "resp_seed" resolves.
  static ResponseStore* store = [] {
    auto* s = new ResponseStore();
    s->put("resp_seed", nlohmann::json::parse(R"([{"type":"message","role":"user","content":"hi"},
        {"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello"}]}])"));
    return s;
  }();
  try {
    const ResponsesRequest request = parse_responses_request(parse_json_body(body), store);
    consume(to_generation_request(request, body));
  } catch (const ApiError&) {
  } catch (const llmesh::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0]) {
    case 'o': chat(body); break;
    case 'a': messages(body, MessagesEndpoint::Create); break;
    case 'c': messages(body, MessagesEndpoint::CountTokens); break;
    case 'r': responses(body); break;
    default:
      chat(body);
      messages(body, MessagesEndpoint::Create);
      messages(body, MessagesEndpoint::CountTokens);
      responses(body);
  }
  return 0;
}
