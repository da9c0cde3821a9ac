#include "api/responses_request.h"

#include <cmath>

#include "api/api_error.h"
#include "api/generation_fields.h"
#include "api/json_fields.h"
#include "api/reasoning_effort.h"
#include "api/responses_items.h"
#include "core/log.h"

namespace llmesh::api {

using nlohmann::json;

namespace {

std::string string_member(const json& object, const char* key, const std::string& where, bool required) {
  const json* v = field(object, key);
  if (!v) {
    if (required) fail_param(where + "." + key, "'{}.{}' is required", where, key);
    return "";
  }
  if (!v->is_string()) fail_param(where + "." + key, "'{}.{}' must be a string, got {}", where, key, v->type_name());
  return v->get<std::string>();
}

// Text of a content value: a string, or parts whose text is joined with "\n"
// (the joining rule of /v1/chat/completions and ChatTemplate).
std::string content_text(const json& content, const std::string& where) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) {
    fail_param(where, "'{}' must be a string or an array of content parts, got {}", where, content.type_name());
  }
  std::string text;
  for (size_t j = 0; j < content.size(); ++j) {
    const json& part = content[j];
    const std::string part_where = fmt::format("{}[{}]", where, j);
    if (!part.is_object()) fail_param(part_where, "'{}' must be an object, got {}", part_where, part.type_name());
    const std::string type = string_member(part, "type", part_where, /*required=*/true);
    std::string part_text;
    if (type == "input_text" || type == "output_text" || type == "text" || type == "summary_text" ||
        type == "reasoning_text") {
      part_text = string_member(part, "text", part_where, /*required=*/true);
    } else if (type == "refusal") {
      part_text = string_member(part, "refusal", part_where, /*required=*/true);
    } else if (type == "input_image" || type == "input_file" || type == "input_audio") {
      fail_param(part_where + ".type", "content part type '{}' is not supported: this server's model takes text only",
                 type);
    } else {
      fail_param(part_where + ".type", "unknown content part type '{}'", type);
    }
    if (j > 0) text += "\n";
    text += part_text;
  }
  return text;
}

// Builds chat messages from input items, merging each assistant turn's
// reasoning, text and tool calls into one message.
class MessageAssembler {
 public:
  void add_message(const std::string& role, std::string content) {
    close_turn();
    messages_.push_back({{"role", role}, {"content", std::move(content)}});
  }

  void add_tool_result(const std::string& call_id, std::string content) {
    close_turn();
    messages_.push_back({{"role", "tool"}, {"tool_call_id", call_id}, {"content", std::move(content)}});
  }

  void add_reasoning(std::string text) {
    if (turn_ && (turn_has_text_ || turn_has_calls_)) close_turn();
    open_turn();
    if (text.empty()) return;  // nothing to render; the template decides how an empty block looks
    // Several reasoning items in a row (not something we emit) read as one block.
    auto& reasoning = (*turn_)["reasoning_content"];
    if (reasoning.is_string() && !reasoning.get_ref<const std::string&>().empty()) {
      reasoning = reasoning.get<std::string>() + "\n\n" + text;
    } else {
      reasoning = std::move(text);
    }
  }

  void add_assistant_text(std::string text) {
    if (turn_ && (turn_has_text_ || turn_has_calls_)) close_turn();
    open_turn();
    (*turn_)["content"] = std::move(text);
    turn_has_text_ = true;
  }

  void add_tool_call(json call) {
    open_turn();
    (*turn_)["tool_calls"].push_back(std::move(call));
    turn_has_calls_ = true;
  }

  json finish() {
    close_turn();
    return std::move(messages_);
  }

 private:
  void open_turn() {
    if (turn_) return;
    turn_ = json{{"role", "assistant"}, {"content", ""}};
    turn_has_text_ = turn_has_calls_ = false;
  }
  void close_turn() {
    if (!turn_) return;
    messages_.push_back(std::move(*turn_));
    turn_.reset();
  }

  json messages_ = json::array();
  std::optional<json> turn_;  // the assistant turn being assembled
  bool turn_has_text_ = false;
  bool turn_has_calls_ = false;
};

// The text of a reasoning item the client echoed back: our encrypted_content
// when present (exact), else its reasoning_text content, else its summary.
std::string reasoning_item_text(const json& item, const std::string& where) {
  if (const json* encrypted = field(item, "encrypted_content")) {
    if (!encrypted->is_string())
      fail_param(where + ".encrypted_content", "'{}.encrypted_content' must be a string", where);
    if (auto text = decode_reasoning_content(encrypted->get_ref<const std::string&>())) return *text;
  }
  if (const json* content = field(item, "content"); content && content->is_array() && !content->empty()) {
    return content_text(*content, where + ".content");
  }
  if (const json* summary = field(item, "summary")) {
    if (!summary->is_array()) fail_param(where + ".summary", "'{}.summary' must be an array", where);
    std::string text;
    for (size_t i = 0; i < summary->size(); ++i) {
      if (i > 0) text += "\n\n";
      text += content_text(json::array({(*summary)[i]}), fmt::format("{}.summary[{}]", where, i));
    }
    return text;
  }
  return "";
}

constexpr std::string_view kResponsesEndpoint = "/v1/responses";

// Items of a type this server does not know are skipped and reported (a
// message's unknown content parts are not: content_text refuses them).
void add_input_item(MessageAssembler& out, const json& item, const std::string& where, IgnoredParts* ignored) {
  if (!item.is_object()) fail_param(where, "'{}' must be an object, got {}", where, item.type_name());
  std::string type = string_member(item, "type", where, /*required=*/false);
  if (type.empty()) {
    if (!field(item, "role")) fail_param(where + ".type", "'{}' needs a 'type' (or a 'role' for a message)", where);
    type = "message";
  }
  if (type == "message") {
    const std::string role = string_member(item, "role", where, /*required=*/true);
    const json* content = field(item, "content");
    if (!content) fail_param(where + ".content", "'{}.content' is required", where);
    std::string text = content_text(*content, where + ".content");
    if (role == "assistant") {
      out.add_assistant_text(std::move(text));
    } else if (role == "user" || role == "system") {
      out.add_message(role, std::move(text));
    } else if (role == "developer") {
      out.add_message("system", std::move(text));  // chat templates know "system"
    } else {
      fail_param(where + ".role", "'{}.role' must be one of user, assistant, system, developer; got '{}'", where, role);
    }
  } else if (type == "reasoning") {
    out.add_reasoning(reasoning_item_text(item, where));
  } else if (type == "function_call") {
    const std::string call_id = string_member(item, "call_id", where, /*required=*/true);
    const std::string name = string_member(item, "name", where, /*required=*/true);
    const std::string arguments = string_member(item, "arguments", where, /*required=*/true);
    out.add_tool_call(
        {{"id", call_id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", arguments}}}});
  } else if (type == "function_call_output") {
    const std::string call_id = string_member(item, "call_id", where, /*required=*/true);
    const json* output = field(item, "output");
    if (!output) fail_param(where + ".output", "'{}.output' is required", where);
    out.add_tool_result(call_id, content_text(*output, where + ".output"));
  } else if (type == "item_reference") {
    fail_param(where + ".type",
               "'item_reference' needs stored responses, and this server is stateless: resend the item itself");
  } else if (ignored) {
    // Records of server-side tools a client echoes back (web_search_call, computer_call, mcp_call,
    // local_shell_call, custom_tool_call, compaction, …), Codex's additional_tools, and item types
    // newer than this server: nothing the model produced or must read.
    ignored->add(kResponsesEndpoint, "input item type '" + type + "'");
  }
}

json parse_tool_choice(const json* choice, const json& tools, ResponsesRequest& r) {
  if (!choice) return "auto";
  if (choice->is_string()) {
    const std::string c = choice->get<std::string>();
    if (c == "auto")
      r.tool_choice = ResponsesToolChoice::Auto;
    else if (c == "none")
      r.tool_choice = ResponsesToolChoice::None;
    else if (c == "required")
      r.tool_choice = ResponsesToolChoice::Required;
    else
      fail_param("tool_choice", "'tool_choice' must be none, auto, required or an object; got '{}'", c);
  } else if (choice->is_object()) {
    const std::string type = string_member(*choice, "type", "tool_choice", /*required=*/true);
    if (type == "function") {
      r.tool_choice = ResponsesToolChoice::Named;
      r.forced_tool_name = string_member(*choice, "name", "tool_choice", /*required=*/true);
      bool known = false;
      for (const auto& tool : tools) known = known || tool["function"]["name"] == r.forced_tool_name;
      if (!known) {
        fail_param("tool_choice.name", "'tool_choice' names the function '{}', which is not in 'tools'",
                   r.forced_tool_name);
      }
    } else if (type == "allowed_tools") {
      const std::string mode = string_member(*choice, "mode", "tool_choice", /*required=*/false);
      r.tool_choice = mode == "required" ? ResponsesToolChoice::Required : ResponsesToolChoice::Auto;
      r.ignored.add(kResponsesEndpoint, "tool_choice 'allowed_tools' restrictions (all function tools stay allowed)");
    } else {
      fail_param("tool_choice.type", "tool_choice type '{}' is not supported (only function tools are)", type);
    }
  } else {
    fail_param("tool_choice", "'tool_choice' must be a string or an object, got {}", choice->type_name());
  }
  if (r.tool_choice == ResponsesToolChoice::Required && tools.empty()) {
    fail_param("tool_choice", "'tool_choice' requires a tool call, but 'tools' has no function tools");
  }
  return *choice;
}

void parse_reasoning(const json* reasoning, ResponsesRequest& r) {
  r.reasoning_echo = {{"effort", nullptr}, {"summary", nullptr}};
  if (!reasoning) return;
  if (!reasoning->is_object()) fail_param("reasoning", "'reasoning' must be an object, got {}", reasoning->type_name());
  if (const json* effort = field(*reasoning, "effort")) {
    if (!effort->is_string()) fail_param("reasoning.effort", "'reasoning.effort' must be a string");
    const std::string e = effort->get<std::string>();
    const ReasoningEffort level = parse_reasoning_effort(e, "reasoning.effort", ErrorStyle::OpenAI);
    r.enable_thinking = level.enable_thinking;
    r.reasoning_budget_tokens = level.budget_tokens;
    r.reasoning_effort = level.template_effort;
    r.reasoning_echo["effort"] = e;
  }
  if (const json* summary = field(*reasoning, "summary")) {
    if (!summary->is_string()) fail_param("reasoning.summary", "'reasoning.summary' must be a string");
    r.reasoning_echo["summary"] = *summary;
  } else if (const json* generate = field(*reasoning, "generate_summary")) {
    r.reasoning_echo["summary"] = *generate;  // the deprecated spelling
  }
}

void parse_text(const json* text, ResponsesRequest& r) {
  r.text_echo = {{"format", {{"type", "text"}}}};
  if (!text) return;
  if (!text->is_object()) fail_param("text", "'text' must be an object, got {}", text->type_name());
  if (const json* verbosity = field(*text, "verbosity")) r.text_echo["verbosity"] = *verbosity;
  const json* format = field(*text, "format");
  if (!format) return;
  if (!format->is_object()) fail_param("text.format", "'text.format' must be an object");
  const std::string type = string_member(*format, "type", "text.format", /*required=*/true);
  if (type == "text") return;
  if (type == "json_object") {
    r.text_format = ResponsesTextFormat::JsonObject;
    r.text_schema = {{"type", "object"}};
  } else if (type == "json_schema") {
    r.text_format = ResponsesTextFormat::JsonSchema;
    string_member(*format, "name", "text.format", /*required=*/true);
    const json* schema = field(*format, "schema");
    if (!schema || !schema->is_object()) fail_param("text.format.schema", "'text.format.schema' must be an object");
    r.text_schema = *schema;
  } else {
    fail_param("text.format.type", "'text.format.type' must be text, json_schema or json_object; got '{}'", type);
  }
  r.text_echo["format"] = *format;
}

}  // namespace

json responses_input_to_messages(const json& input, const json& instructions, const json& history,
                                 IgnoredParts* ignored) {
  MessageAssembler out;
  if (instructions.is_string()) {
    out.add_message("system", instructions.get<std::string>());
  } else if (!instructions.is_null()) {
    fail_param("instructions", "'instructions' must be a string, got {}", instructions.type_name());
  }
  for (size_t i = 0; i < history.size(); ++i) {
    add_input_item(out, history[i], fmt::format("previous_response_id (stored item {})", i), ignored);
  }
  if (input.is_string()) {
    out.add_message("user", input.get<std::string>());
  } else if (input.is_array()) {
    for (size_t i = 0; i < input.size(); ++i) add_input_item(out, input[i], fmt::format("input[{}]", i), ignored);
  } else {
    fail_param("input", "'input' must be a string or an array of items, got {}", input.type_name());
  }
  json messages = out.finish();
  if (messages.empty()) fail_param("input", "'input' holds no messages");
  return messages;
}

json responses_tools_to_chat_tools(const json& tools, std::vector<std::string>* ignored_types) {
  if (!tools.is_array()) fail_param("tools", "'tools' must be an array, got {}", tools.type_name());
  json out = json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const json& tool = tools[i];
    const std::string where = fmt::format("tools[{}]", i);
    if (!tool.is_object()) fail_param(where, "'{}' must be an object, got {}", where, tool.type_name());
    const std::string type = string_member(tool, "type", where, /*required=*/true);
    if (type != "function") {
      if (ignored_types) ignored_types->push_back(type);
      continue;
    }
    // Chat-shaped {type, function:{…}} is accepted too (clients that reuse their chat tools).
    const json& spec = tool.contains("function") && tool["function"].is_object() ? tool["function"] : tool;
    const std::string name = string_member(spec, "name", where, /*required=*/true);
    if (name.empty()) fail_param(where + ".name", "'{}.name' must not be empty", where);
    json function = {{"name", name}};
    if (const json* description = field(spec, "description")) {
      if (!description->is_string()) fail_param(where + ".description", "'{}.description' must be a string", where);
      function["description"] = *description;
    }
    if (const json* parameters = field(spec, "parameters")) {
      if (!parameters->is_object()) fail_param(where + ".parameters", "'{}.parameters' must be an object", where);
      function["parameters"] = *parameters;
    }
    out.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

ResponsesRequest parse_responses_request(const json& body, ResponseStore* store) {
  ResponsesRequest r;
  GenerationParams& p = r.params;
  p.model = model_field(body);
  json history = json::array();
  if (const json* previous = field(body, "previous_response_id")) {
    if (!previous->is_string()) fail_param("previous_response_id", "'previous_response_id' must be a string");
    r.previous_response_id = previous->get<std::string>();
    if (!store) {
      fail_param("previous_response_id",
                 "'previous_response_id' is not supported here; resend the whole conversation in 'input'");
    }
    std::optional<json> stored = store->get(r.previous_response_id);
    if (!stored) {
      fail_param("previous_response_id",
                 "Previous response with id '{}' not found. This server keeps the last {} responses created with "
                 "store=true in memory (none survive a restart); resend the conversation in 'input' instead",
                 r.previous_response_id, ResponseStore::kMaxEntries);
    }
    history = std::move(*stored);
  }
  if (field(body, "conversation")) {
    fail_param("conversation", "'conversation' is not supported: this server is stateless; send the items in 'input'");
  }
  if (field(body, "background") && body["background"] == true) {
    fail_param("background", "background responses are not supported");
  }
  p.max_tokens = integer_field(body, "max_output_tokens", 1, kMaxOutputTokensLimit);
  // With /v1/chat/completions' llmesh extensions top_k, seed, ignore_eos (tests need exact lengths and determinism).
  parse_sampling_fields(body, p);
  r.store = bool_field(body, "store", "store").value_or(true);
  r.parallel_tool_calls = bool_field(body, "parallel_tool_calls", "parallel_tool_calls").value_or(true);

  r.instructions = body.contains("instructions") ? body["instructions"] : json(nullptr);
  const json* input = field(body, "input");
  if (!input) fail_param("input", "'input' is required");
  r.messages = responses_input_to_messages(*input, r.instructions, history, &r.ignored);
  r.conversation_items = std::move(history);
  if (input->is_string()) {
    r.conversation_items.push_back({{"type", "message"}, {"role", "user"}, {"content", *input}});
  } else {
    for (const auto& item : *input) r.conversation_items.push_back(item);
  }

  r.tools_echo = json::array();
  r.tools = json::array();
  if (const json* tools = field(body, "tools")) {
    r.tools = responses_tools_to_chat_tools(*tools, &r.ignored_tool_types);
    r.tools_echo = *tools;
    for (const auto& type : r.ignored_tool_types) r.ignored.add(kResponsesEndpoint, "tool type '" + type + "'");
  }
  r.tool_choice_echo = parse_tool_choice(field(body, "tool_choice"), r.tools, r);

  parse_reasoning(field(body, "reasoning"), r);
  parse_text(field(body, "text"), r);

  if (const json* include = field(body, "include")) {
    if (!include->is_array()) fail_param("include", "'include' must be an array of strings");
    for (const auto& entry : *include) {
      if (!entry.is_string()) fail_param("include", "'include' must be an array of strings");
      if (entry == "reasoning.encrypted_content") r.include_encrypted_reasoning = true;
    }
  }
  r.metadata = json::object();
  if (const json* metadata = field(body, "metadata")) {
    if (!metadata->is_object()) fail_param("metadata", "'metadata' must be an object");
    r.metadata = *metadata;
  }
  r.prompt_cache_key = body.contains("prompt_cache_key") ? body["prompt_cache_key"] : json(nullptr);
  r.user = body.contains("user") ? body["user"] : json(nullptr);
  add_unknown_fields(body,
                     {"model", "input", "instructions", "previous_response_id", "conversation", "background",
                      "max_output_tokens", "temperature", "top_p", "top_k", "seed", "ignore_eos", "stream",
                      "loop_guard", "store", "parallel_tool_calls", "tools", "tool_choice", "reasoning", "text",
                      "include", "metadata", "prompt_cache_key", "user"},
                     kResponsesEndpoint, r.ignored);
  return r;
}

}  // namespace llmesh::api
