#include "api/anthropic_request.h"

#include <cmath>
#include <unordered_map>

#include "api/api_error.h"
#include "api/generation_fields.h"
#include "api/generation_request.h"
#include "api/json_fields.h"
#include "api/reasoning_effort.h"

namespace llmesh::api {

using OJson = nlohmann::ordered_json;

namespace {

constexpr std::string_view kBillingHeaderPrefix = "x-anthropic-billing-header:";

std::string path_join(const std::string& where, const std::string& key) {
  return where.empty() ? key : where + "." + key;
}
std::string path_index(const std::string& where, size_t i) { return where + "." + std::to_string(i); }

const OJson& require_object(const OJson& value, const std::string& where) {
  if (!value.is_object()) fail_param(where, "{}: must be an object, got {}", where, value.type_name());
  return value;
}

std::string require_string(const OJson& object, const char* key, const std::string& where) {
  const std::string param = path_join(where, key);
  const OJson* v = field(object, key);
  if (!v) fail_param(param, "{}: Field required", param);
  if (!v->is_string()) fail_param(param, "{}: must be a string, got {}", param, v->type_name());
  return v->get<std::string>();
}

std::optional<std::string> optional_string(const OJson& object, const char* key, const std::string& where) {
  const OJson* v = field(object, key);
  if (!v) return std::nullopt;
  const std::string param = path_join(where, key);
  if (!v->is_string()) fail_param(param, "{}: must be a string, got {}", param, v->type_name());
  return v->get<std::string>();
}

std::optional<int64_t> integer_field(const OJson& object, const char* key, const std::string& where, int64_t min,
                                     int64_t max) {
  const OJson* v = field(object, key);
  if (!v) return std::nullopt;
  const std::string param = path_join(where, key);
  bool integral = v->is_number_integer();
  if (v->is_number_float()) {
    const double x = v->get<double>();
    integral = std::isfinite(x) && std::floor(x) == x && std::fabs(x) < 9e15;
  }
  if (!integral) fail_param(param, "{}: must be an integer, got {}", param, v->dump());
  const int64_t x = v->is_number_float() ? int64_t(v->get<double>()) : v->get<int64_t>();
  if (x < min || x > max) fail_param(param, "{}: must be between {} and {}, got {}", param, min, max, x);
  return x;
}

void append_text(std::string& text, bool& has_text, const std::string& piece) {
  if (has_text) text += "\n";  // the joining rule ChatTemplate uses for text parts
  text += piece;
  has_text = true;
}

std::string block_type(const OJson& block, const std::string& where) {
  require_object(block, where);
  return require_string(block, "type", where);
}

[[noreturn]] void fail_image(const std::string& where) {
  fail_param(where, "{}: image content is not supported: this model has no vision input (send text only)", where);
}

constexpr std::string_view kMessagesEndpoint = "/v1/messages";

// Blocks that record server-side work or opaque state (server tool calls and
// their results, MCP calls, redacted thinking, tool references, uploads):
// nothing the model must read to answer, so they are skipped.
bool is_record_block(const std::string& type) {
  return type == "redacted_thinking" || type == "server_tool_use" || type == "container_upload" ||
         type == "tool_reference" || type.ends_with("_tool_result") || type.starts_with("mcp_");
}

// A block no branch renders: ignored (and reported) when it is a record, else
// a 400: content of an unknown type may be what the question is about.
void skip_block(const std::string& type, const std::string& where, IgnoredParts* ignored) {
  if (!is_record_block(type)) {
    const std::string param = path_join(where, "type");
    fail_param(param, "{}: unknown content block type '{}': its content cannot be shown to the model", param, type);
  }
  if (ignored) ignored->add(kMessagesEndpoint, "content block type '" + type + "'");
}

// A search_result block's text: its title, source and text blocks.
std::string search_result_text(const OJson& block, const std::string& where) {
  std::string text;
  bool has_text = false;
  if (auto title = optional_string(block, "title", where)) append_text(text, has_text, *title);
  if (auto source = optional_string(block, "source", where)) append_text(text, has_text, *source);
  const std::string content_where = path_join(where, "content");
  const OJson* content = field(block, "content");
  if (!content || !content->is_array()) fail_param(content_where, "{}: must be an array of text blocks", content_where);
  for (size_t i = 0; i < content->size(); ++i) {
    const std::string part_where = path_index(content_where, i);
    const std::string type = block_type((*content)[i], part_where);
    if (type != "text") fail_param(part_where, "{}: search_result content must be text blocks, got '{}'", part_where, type);
    append_text(text, has_text, require_string((*content)[i], "text", part_where));
  }
  return text;
}

// A document block's text: plain-text sources and content blocks; PDFs and URLs are refused.
std::string document_text(const OJson& block, const std::string& where) {
  const std::string source_where = path_join(where, "source");
  const OJson* source = field(block, "source");
  if (!source) fail_param(source_where, "{}: Field required", source_where);
  require_object(*source, source_where);
  const std::string source_type = require_string(*source, "type", source_where);
  std::string text;
  bool has_text = false;
  if (auto title = optional_string(block, "title", where)) append_text(text, has_text, *title);
  if (source_type == "text") {
    append_text(text, has_text, require_string(*source, "data", source_where));
  } else if (source_type == "content") {
    const OJson* content = field(*source, "content");
    const std::string content_where = path_join(source_where, "content");
    if (content && content->is_string()) {
      append_text(text, has_text, content->get<std::string>());
    } else if (content && content->is_array()) {
      for (size_t i = 0; i < content->size(); ++i) {
        const std::string part_where = path_index(content_where, i);
        const std::string type = block_type((*content)[i], part_where);
        if (type == "image") fail_image(part_where);
        if (type == "text") append_text(text, has_text, require_string((*content)[i], "text", part_where));
      }
    } else {
      fail_param(content_where, "{}: must be a string or an array of text blocks", content_where);
    }
  } else {
    fail_param(source_where, "{}: document source type '{}' is not supported (only 'text' and 'content')", source_where,
               source_type);
  }
  return text;
}

// tool_result content: a string or text/document/search_result blocks joined with "\n".
std::string tool_result_text(const OJson& block, const std::string& where, IgnoredParts* ignored) {
  const OJson* content = field(block, "content");
  const std::string content_where = path_join(where, "content");
  if (!content) return "";
  if (content->is_string()) return content->get<std::string>();
  if (!content->is_array()) {
    fail_param(content_where, "{}: must be a string or an array of content blocks, got {}", content_where,
               content->type_name());
  }
  std::string text;
  bool has_text = false;
  for (size_t i = 0; i < content->size(); ++i) {
    const std::string part_where = path_index(content_where, i);
    const OJson& part = (*content)[i];
    const std::string type = block_type(part, part_where);
    if (type == "text")
      append_text(text, has_text, require_string(part, "text", part_where));
    else if (type == "image")
      fail_image(part_where);
    else if (type == "document")
      append_text(text, has_text, document_text(part, part_where));
    else if (type == "search_result")
      append_text(text, has_text, search_result_text(part, part_where));
    else
      skip_block(type, part_where, ignored);
  }
  return text;
}

// Text of a system prompt or a role "system" message: a string or text blocks.
std::string system_text(const OJson& value, const std::string& where, int* num_dropped) {
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_array())
    fail_param(where, "{}: must be a string or an array of text blocks, got {}", where, value.type_name());
  std::string text;
  bool has_text = false;
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string block_where = path_index(where, i);
    const std::string type = block_type(value[i], block_where);
    if (type != "text") fail_param(block_where, "{}: system blocks must be text blocks, got '{}'", block_where, type);
    const std::string piece = require_string(value[i], "text", block_where);
    if (num_dropped && is_billing_header_block(piece)) {
      ++*num_dropped;
      continue;
    }
    append_text(text, has_text, piece);
  }
  return text;
}

class MessageMapper {
 public:
  MessageMapper(OJson* out, IgnoredParts* ignored) : out_(*out), ignored_(ignored) {}

  void add(const OJson& message, const std::string& where) {
    require_object(message, where);
    const std::string role = require_string(message, "role", where);
    const OJson* content = field(message, "content");
    const std::string content_where = path_join(where, "content");
    if (!content) fail_param(content_where, "{}: Field required", content_where);
    if (!content->is_string() && !content->is_array()) {
      fail_param(content_where, "{}: must be a string or an array of content blocks, got {}", content_where,
                 content->type_name());
    }
    if (role == "user")
      add_user(*content, content_where);
    else if (role == "assistant")
      add_assistant(*content, content_where);
    else if (role == "system")
      out_.push_back({{"role", "system"}, {"content", system_text(*content, content_where, nullptr)}});
    else
      fail_param(path_join(where, "role"), "{}: must be 'user', 'assistant' or 'system', got '{}'",
                 path_join(where, "role"), role);
  }

 private:
  void add_user(const OJson& content, const std::string& where) {
    if (content.is_string()) {
      out_.push_back({{"role", "user"}, {"content", content.get<std::string>()}});
      return;
    }
    std::string text;
    bool has_text = false;
    bool emitted_any = false;
    auto flush_text = [&] {
      if (!has_text) return;
      out_.push_back({{"role", "user"}, {"content", text}});
      text.clear();
      has_text = false;
      emitted_any = true;
    };
    for (size_t i = 0; i < content.size(); ++i) {
      const std::string block_where = path_index(where, i);
      const OJson& block = content[i];
      const std::string type = block_type(block, block_where);
      if (type == "text") {
        append_text(text, has_text, require_string(block, "text", block_where));
      } else if (type == "image") {
        fail_image(block_where);
      } else if (type == "document") {
        append_text(text, has_text, document_text(block, block_where));
      } else if (type == "search_result") {
        append_text(text, has_text, search_result_text(block, block_where));
      } else if (type == "tool_result") {
        flush_text();  // keeps the client's block order
        const std::string tool_use_id = require_string(block, "tool_use_id", block_where);
        std::string result = tool_result_text(block, block_where, ignored_);
        const OJson* is_error = field(block, "is_error");
        if (is_error && !is_error->is_boolean()) {
          fail_param(path_join(block_where, "is_error"), "{}: must be a boolean", path_join(block_where, "is_error"));
        }
        if (is_error && is_error->get<bool>()) result = "Error: " + result;
        OJson tool = {{"role", "tool"}, {"tool_call_id", tool_use_id}};
        if (auto name = tool_names_.find(tool_use_id); name != tool_names_.end()) tool["name"] = name->second;
        tool["content"] = std::move(result);
        out_.push_back(std::move(tool));
        emitted_any = true;
      } else if (type == "tool_use") {
        fail_param(block_where, "{}: tool_use blocks belong in assistant messages", block_where);
      } else if (type == "thinking") {
        if (ignored_) ignored_->add(kMessagesEndpoint, "thinking blocks in user turns");
      } else {
        skip_block(type, block_where, ignored_);
      }
    }
    if (has_text || !emitted_any) {
      has_text = true;  // an empty user turn still renders as one
      flush_text();
    }
  }

  void add_assistant(const OJson& content, const std::string& where) {
    OJson message = {{"role", "assistant"}, {"content", ""}};
    if (content.is_string()) {
      message["content"] = content.get<std::string>();
      out_.push_back(std::move(message));
      return;
    }
    std::string text, reasoning;
    bool has_text = false, has_reasoning = false;
    OJson tool_calls = OJson::array();
    for (size_t i = 0; i < content.size(); ++i) {
      const std::string block_where = path_index(where, i);
      const OJson& block = content[i];
      const std::string type = block_type(block, block_where);
      if (type == "text") {
        append_text(text, has_text, require_string(block, "text", block_where));
      } else if (type == "thinking") {
        append_text(reasoning, has_reasoning, require_string(block, "thinking", block_where));
      } else if (type == "tool_use") {
        const std::string id = require_string(block, "id", block_where);
        const std::string name = require_string(block, "name", block_where);
        const OJson* input = field(block, "input");
        const std::string input_where = path_join(block_where, "input");
        if (!input) fail_param(input_where, "{}: Field required", input_where);
        if (!input->is_object())
          fail_param(input_where, "{}: must be an object, got {}", input_where, input->type_name());
        tool_calls.push_back({{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", *input}}}});
        tool_names_[id] = name;
      } else if (type == "image") {
        fail_image(block_where);
      } else {
        skip_block(type, block_where, ignored_);  // redacted_thinking is opaque to us, server_tool_use not ours
      }
    }
    message["content"] = text;
    if (has_reasoning) message["reasoning_content"] = reasoning;
    if (!tool_calls.empty()) message["tool_calls"] = std::move(tool_calls);
    out_.push_back(std::move(message));
  }

  OJson& out_;
  IgnoredParts* ignored_;
  std::unordered_map<std::string, std::string> tool_names_;  // tool_use id -> tool name
};

OJson parse_tools(const OJson& tools) {
  if (!tools.is_array()) fail_param("tools", "tools: must be an array, got {}", tools.type_name());
  OJson out = OJson::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string where = path_index("tools", i);
    const OJson& tool = require_object(tools[i], where);
    // Server tools (web_search_…, bash_…, text_editor_…) run on Anthropic's side: not offered to the model.
    if (auto type = optional_string(tool, "type", where); type && *type != "custom") continue;
    const std::string name = require_string(tool, "name", where);
    if (name.empty()) fail_param(path_join(where, "name"), "{}: must not be empty", path_join(where, "name"));
    const OJson* schema = field(tool, "input_schema");
    const std::string schema_where = path_join(where, "input_schema");
    if (!schema) fail_param(schema_where, "{}: Field required", schema_where);
    require_object(*schema, schema_where);
    OJson function = {{"name", name}};
    if (auto description = optional_string(tool, "description", where)) function["description"] = *description;
    function["parameters"] = *schema;
    out.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

void parse_tool_choice(const OJson& choice, MessagesRequest& r) {
  std::string type;
  if (choice.is_string()) {
    type = choice.get<std::string>();
  } else {
    require_object(choice, "tool_choice");
    type = require_string(choice, "type", "tool_choice");
    if (const OJson* parallel = field(choice, "disable_parallel_tool_use"); parallel && !parallel->is_boolean()) {
      fail_param("tool_choice.disable_parallel_tool_use", "tool_choice.disable_parallel_tool_use: must be a boolean");
    }
  }
  if (type == "auto") {
    r.tool_choice = ToolChoiceMode::Auto;
  } else if (type == "any") {
    r.tool_choice = ToolChoiceMode::Any;
  } else if (type == "none") {
    r.tool_choice = ToolChoiceMode::None;
  } else if (type == "tool") {
    if (!choice.is_object()) fail_param("tool_choice", "tool_choice: {{type: 'tool'}} needs a 'name'");
    r.tool_choice = ToolChoiceMode::Tool;
    r.forced_tool_name = require_string(choice, "name", "tool_choice");
  } else {
    fail_param("tool_choice.type", "tool_choice.type: must be 'auto', 'any', 'tool' or 'none', got '{}'", type);
  }
  if ((r.tool_choice == ToolChoiceMode::Any || r.tool_choice == ToolChoiceMode::Tool) && r.tools.empty()) {
    fail_param("tool_choice", "tool_choice: '{}' requires 'tools'", type);
  }
  if (r.tool_choice == ToolChoiceMode::Tool) {
    bool found = false;
    for (const auto& tool : r.tools) found = found || tool["function"]["name"] == r.forced_tool_name;
    if (!found) fail_param("tool_choice.name", "tool_choice.name: no tool named '{}' in 'tools'", r.forced_tool_name);
  }
}

// {type: "json_schema", schema: {...}}
OJson parse_output_format(const OJson& format, const std::string& where) {
  require_object(format, where);
  const std::string type = require_string(format, "type", where);
  if (type != "json_schema")
    fail_param(path_join(where, "type"), "{}: must be 'json_schema', got '{}'", path_join(where, "type"), type);
  const OJson* schema = field(format, "schema");
  const std::string schema_where = path_join(where, "schema");
  if (!schema) fail_param(schema_where, "{}: Field required", schema_where);
  return require_object(*schema, schema_where);
}

}  // namespace

bool is_billing_header_block(const std::string& text) { return text.rfind(kBillingHeaderPrefix, 0) == 0; }

bool resolve_thinking(const std::string& thinking_type, const std::string& effort) {
  if (thinking_type == "enabled") return true;
  if (thinking_type == "adaptive") return effort != "off" && effort != "none";
  if (thinking_type == "disabled") return false;
  return kDefaultEnableThinking;
}

OJson parse_ordered_json_body(const std::string& body) { return parse_json_object_body<OJson>(body); }

MessagesRequest parse_messages_request(const OJson& body, MessagesEndpoint endpoint) {
  MessagesRequest r;
  if (auto model = optional_string(body, "model", "")) r.params.model = *model;

  if (endpoint == MessagesEndpoint::Create) {
    r.params.max_tokens = integer_field(body, "max_tokens", "", 1, kMaxOutputTokensLimit);
    if (!r.params.max_tokens) fail_param("max_tokens", "max_tokens: Field required");
    if (auto t = number_field(body, "temperature", 0.0, 1.0)) r.params.temperature = float(*t);
    r.params.top_p = top_p_field(body);
    if (auto k = integer_field(body, "top_k", "", 0, int64_t(1) << 30)) r.params.top_k = int32_t(*k);
    if (const OJson* stops = field(body, "stop_sequences")) {
      if (!stops->is_array()) fail_param("stop_sequences", "stop_sequences: must be an array of strings");
      for (size_t i = 0; i < stops->size(); ++i) {
        if (!(*stops)[i].is_string()) {
          fail_param("stop_sequences", "stop_sequences.{}: must be a string, got {}", i, (*stops)[i].type_name());
        }
        if (!(*stops)[i].get_ref<const std::string&>().empty()) r.params.stop.push_back((*stops)[i].get<std::string>());
      }
    }
    r.params.stream = bool_field(body, "stream").value_or(false);
    r.params.loop_guard = loop_guard_field(body);
    if (const OJson* metadata = field(body, "metadata")) require_object(*metadata, "metadata");
  }

  if (const OJson* system = field(body, "system")) {
    const std::string text = system_text(*system, "system", &r.num_dropped_system_blocks);
    if (!text.empty()) r.messages.push_back({{"role", "system"}, {"content", text}});
  }

  if (const OJson* tools = field(body, "tools")) r.tools = parse_tools(*tools);
  if (const OJson* choice = field(body, "tool_choice")) parse_tool_choice(*choice, r);

  const OJson* messages = field(body, "messages");
  if (!messages) fail_param("messages", "messages: Field required");
  if (!messages->is_array()) fail_param("messages", "messages: must be an array, got {}", messages->type_name());
  if (messages->empty()) fail_param("messages", "messages: at least one message is required");
  MessageMapper mapper(&r.messages, &r.ignored);
  for (size_t i = 0; i < messages->size(); ++i) mapper.add((*messages)[i], path_index("messages", i));
  // A final assistant turn without tool calls is a prefill: the response continues its text.
  const OJson& last = r.messages.back();
  if (last["role"] == "assistant" && !last.contains("tool_calls") && r.messages.size() > 1) {
    r.assistant_prefill = last["content"].get<std::string>();
    r.messages.erase(r.messages.size() - 1);
  }

  std::string thinking_type;
  std::optional<int64_t> effort_budget;
  if (const OJson* thinking = field(body, "thinking")) {
    require_object(*thinking, "thinking");
    thinking_type = require_string(*thinking, "type", "thinking");
    if (thinking_type == "enabled") {
      r.thinking_budget_tokens = integer_field(*thinking, "budget_tokens", "thinking", 1, int64_t(1) << 40);
      if (!r.thinking_budget_tokens) fail_param("thinking.budget_tokens", "thinking.budget_tokens: Field required");
    } else if (thinking_type != "disabled" && thinking_type != "adaptive") {
      fail_param("thinking.type", "thinking.type: must be 'enabled', 'adaptive' or 'disabled', got '{}'",
                 thinking_type);
    }
  }
  if (const OJson* config = field(body, "output_config")) {
    require_object(*config, "output_config");
    if (auto effort = optional_string(*config, "effort", "output_config")) {
      r.effort = *effort;
      const ReasoningEffort level = parse_reasoning_effort(*effort, "output_config.effort", ErrorStyle::Anthropic);
      effort_budget = level.budget_tokens;
      r.reasoning_effort = level.template_effort;
    }
    if (const OJson* format = field(*config, "format"))
      r.output_schema = parse_output_format(*format, "output_config.format");
  }
  if (const OJson* format = field(body, "output_format"); format && r.output_schema.is_null()) {
    r.output_schema = parse_output_format(*format, "output_format");  // the structured-outputs beta spelling
  }
  if (!r.output_schema.is_null() && (r.tool_choice == ToolChoiceMode::Any || r.tool_choice == ToolChoiceMode::Tool)) {
    fail_param("tool_choice", "tool_choice: a forced tool call cannot be combined with output_config.format");
  }
  r.enable_thinking = resolve_thinking(thinking_type, r.effort);
  // An explicit budget_tokens wins over the effort's.
  if (r.enable_thinking) r.reasoning_budget_tokens = r.thinking_budget_tokens ? r.thinking_budget_tokens : effort_budget;
  add_unknown_fields(body,
                     {"model", "messages", "system", "max_tokens", "stop_sequences", "stream", "temperature", "top_k",
                      "top_p", "tools", "tool_choice", "thinking", "output_config", "output_format", "loop_guard", "metadata"},
                     kMessagesEndpoint, r.ignored);
  return r;
}

}  // namespace llmesh::api
