#include "api/openai_request.h"

#include <cmath>

#include "api/api_error.h"
#include "api/generation_fields.h"
#include "api/json_fields.h"
#include "api/reasoning_effort.h"

namespace llmesh::api {

using nlohmann::json;

namespace {

const char* type_name(const json& v) { return v.type_name(); }

std::vector<std::string> stop_field(const json& body) {
  const json* v = field(body, "stop");
  if (!v) return {};
  if (v->is_string()) return {v->get<std::string>()};
  if (!v->is_array()) fail_param("stop", "'stop' must be a string or an array of strings, got {}", type_name(*v));
  if (v->size() > 16) fail_param("stop", "'stop' may hold at most 16 strings, got {}", v->size());
  std::vector<std::string> stops;
  for (const auto& s : *v) {
    if (!s.is_string()) fail_param("stop", "'stop' must be a string or an array of strings; found {}", type_name(s));
    stops.push_back(s.get<std::string>());
  }
  return stops;
}

GenerationParams parse_generation_params(const json& body) {
  GenerationParams p;
  p.model = model_field(body);
  p.max_tokens = integer_field(body, "max_completion_tokens", 1, kMaxOutputTokensLimit);
  if (!p.max_tokens) p.max_tokens = integer_field(body, "max_tokens", 1, kMaxOutputTokensLimit);
  parse_sampling_fields(body, p);
  if (auto m = number_field(body, "min_p", 0.0, 1.0)) p.min_p = float(*m);
  if (auto r = number_field(body, "repetition_penalty", 0.0, 100.0)) {
    if (*r <= 0.0) fail_param("repetition_penalty", "'repetition_penalty' must be greater than 0, got {}", *r);
    p.repetition_penalty = float(*r);
  }
  if (auto x = number_field(body, "presence_penalty", -2.0, 2.0)) p.presence_penalty = float(*x);
  if (auto x = number_field(body, "frequency_penalty", -2.0, 2.0)) p.frequency_penalty = float(*x);
  if (auto n = integer_field(body, "n", 1, 1 << 20); n && *n != 1) fail_param("n", "only n=1 is supported, got {}", *n);
  if (auto m = integer_field(body, "min_tokens", 0, kMaxOutputTokensLimit)) p.min_tokens = *m;
  if (p.max_tokens && p.min_tokens > *p.max_tokens) {
    fail_param("min_tokens", "'min_tokens' ({}) must not exceed 'max_tokens' ({})", p.min_tokens, *p.max_tokens);
  }
  p.stop = stop_field(body);
  if (const json* options = field(body, "stream_options")) {
    if (!options->is_object()) fail_param("stream_options", "'stream_options' must be an object");
    if (auto usage = bool_field(*options, "include_usage")) p.include_usage = *usage;
  }
  return p;
}

constexpr std::string_view kChatEndpoint = "/v1/chat/completions";

// Message keys the server or the chat templates use; others are dropped (and reported).
bool is_known_message_key(const std::string& key) {
  return key == "role" || key == "content" || key == "name" || key == "tool_calls" || key == "tool_call_id" ||
         key == "reasoning_content";
}

json normalize_content(const json& content, const std::string& where) {
  if (content.is_null() || content.is_string()) return content;
  if (!content.is_array()) {
    fail_param(where, "'{}' must be a string or an array of content parts, got {}", where, type_name(content));
  }
  std::string text;
  for (size_t j = 0; j < content.size(); ++j) {
    const json& part = content[j];
    const std::string part_where = fmt::format("{}[{}]", where, j);
    if (!part.is_object()) fail_param(part_where, "'{}' must be an object", part_where);
    auto type = part.find("type");
    if (type == part.end() || !type->is_string()) fail_param(part_where + ".type", "'{}.type' is required", part_where);
    const std::string type_name = type->get<std::string>();
    // The model must see every part of a message: a part it cannot see is refused, never skipped.
    if (type_name == "image_url" || type_name == "input_image" || type_name == "input_audio" || type_name == "file") {
      fail_param(part_where + ".type", "content part type '{}' is not supported: this server's model takes text only",
                 type_name);
    }
    const char* text_key = type_name == "refusal" ? "refusal" : "text";
    if (type_name != "text" && type_name != "input_text" && type_name != "refusal") {
      fail_param(part_where + ".type", "unknown content part type '{}' in '{}' (text parts only)", type_name, where);
    }
    auto value = part.find(text_key);
    if (value == part.end() || !value->is_string()) {
      fail_param(part_where + "." + text_key, "'{}.{}' must be a string", part_where, text_key);
    }
    if (j > 0) text += "\n";  // the same joining rule as ChatTemplate
    text += value->get<std::string>();
  }
  return text;
}

}  // namespace

engine::SamplingParams GenerationParams::sampling(const model::GenerationDefaults& defaults) const {
  engine::SamplingParams s;
  s.temperature = temperature.value_or(defaults.temperature.value_or(1.0f));
  s.top_p = top_p.value_or(defaults.top_p.value_or(1.0f));
  s.top_k = top_k.value_or(defaults.top_k.value_or(0));
  s.min_p = min_p.value_or(defaults.min_p.value_or(0.0f));
  s.repetition_penalty = repetition_penalty.value_or(defaults.repetition_penalty.value_or(1.0f));
  s.presence_penalty = presence_penalty;
  s.frequency_penalty = frequency_penalty;
  s.seed = seed;
  return s;
}

json parse_json_body(const std::string& body) { return parse_json_object_body<json>(body); }

json normalize_messages(const json& messages, IgnoredParts* ignored) {
  if (!messages.is_array()) fail_param("messages", "'messages' must be an array, got {}", type_name(messages));
  if (messages.empty()) fail_param("messages", "'messages' must not be empty");
  json out = json::array();
  for (size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    const std::string where = fmt::format("messages[{}]", i);
    if (!m.is_object()) fail_param(where, "'{}' must be an object, got {}", where, type_name(m));
    auto role = m.find("role");
    if (role == m.end() || !role->is_string()) fail_param(where + ".role", "'{}.role' must be a string", where);
    const std::string role_name = role->get<std::string>();
    if (role_name != "system" && role_name != "developer" && role_name != "user" && role_name != "assistant" &&
        role_name != "tool") {
      fail_param(where + ".role", "'{}.role' must be one of system, developer, user, assistant, tool; got '{}'",
                 where, role_name);
    }
    json normalized = json::object();
    for (auto it = m.begin(); it != m.end(); ++it) {
      if (is_known_message_key(it.key())) {
        normalized[it.key()] = it.value();
      } else if (ignored) {
        ignored->add(kChatEndpoint, "message field '" + it.key() + "'");
      }
    }
    if (role_name == "developer") normalized["role"] = "system";  // templates know "system"
    auto content = m.find("content");
    if (content == m.end() || content->is_null()) {
      if (role_name != "assistant") fail_param(where + ".content", "'{}.content' is required", where);
      normalized["content"] = "";  // an assistant turn with only tool calls; templates expect a string
    } else {
      normalized["content"] = normalize_content(*content, where + ".content");
    }
    if (auto calls = m.find("tool_calls"); calls != m.end() && !calls->is_null() && !calls->is_array()) {
      fail_param(where + ".tool_calls", "'{}.tool_calls' must be an array", where);
    }
    out.push_back(std::move(normalized));
  }
  return out;
}

ChatCompletionRequest parse_chat_completion_request(const json& body) {
  ChatCompletionRequest r;
  r.params = parse_generation_params(body);
  auto messages = body.find("messages");
  if (messages == body.end()) fail_param("messages", "'messages' is required");
  r.messages = normalize_messages(*messages, &r.ignored);
  add_unknown_fields(body,
                     {"model", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p", "top_k",
                      "min_p", "repetition_penalty", "presence_penalty", "frequency_penalty", "n", "min_tokens", "stop",
                      "stream", "stream_options", "seed", "ignore_eos", "logprobs", "top_logprobs", "tools",
                      "tool_choice", "response_format", "chat_template_kwargs", "enable_thinking", "reasoning_effort",
                      "loop_guard"},
                     kChatEndpoint, r.ignored);

  if (auto lp = bool_field(body, "logprobs")) r.params.logprobs = *lp;
  if (auto k = integer_field(body, "top_logprobs", 0, 20)) {
    if (!r.params.logprobs && *k > 0) fail_param("top_logprobs", "'top_logprobs' requires 'logprobs': true");
    r.params.top_logprobs = int32_t(*k);
  }

  r.tools = json::array();
  if (const json* tools = field(body, "tools")) {
    if (!tools->is_array()) fail_param("tools", "'tools' must be an array, got {}", type_name(*tools));
    for (size_t i = 0; i < tools->size(); ++i) {
      const json& tool = (*tools)[i];
      const std::string where = fmt::format("tools[{}]", i);
      if (!tool.is_object()) fail_param(where, "'{}' must be an object", where);
      auto type = tool.find("type");
      if (type != tool.end() && !type->is_string()) fail_param(where + ".type", "'{}.type' must be a string", where);
      if (type != tool.end() && *type != "function") {  // custom and hosted tools: not offered to the model
        r.ignored.add(kChatEndpoint, "tool type '" + type->get<std::string>() + "'");
        continue;
      }
      auto function = tool.find("function");
      if (function == tool.end() || !function->is_object()) {
        fail_param(where + ".function", "'{}.function' must be an object", where);
      }
      auto name = function->find("name");
      if (name == function->end() || !name->is_string() || name->get_ref<const std::string&>().empty()) {
        fail_param(where + ".function.name", "'{}.function.name' must be a non-empty string", where);
      }
      // A JSON Schema object (its absence means "no arguments"); the template and the grammar read it.
      auto parameters = function->find("parameters");
      if (parameters != function->end() && !parameters->is_object() && !parameters->is_null()) {
        fail_param(where + ".function.parameters", "'{}.function.parameters' must be a JSON Schema object, got {}",
                   where, parameters->type_name());
      }
      r.tools.push_back(tool);
    }
  }
  bool tool_choice_none = false;
  if (const json* choice = field(body, "tool_choice")) {
    if (choice->is_string()) {
      const std::string c = choice->get<std::string>();
      if (c != "none" && c != "auto" && c != "required") {
        fail_param("tool_choice", "'tool_choice' must be none, auto, required or an object; got '{}'", c);
      }
      tool_choice_none = c == "none";
      r.tool_call_required = c == "required";
    } else if (choice->is_object()) {
      const json* function = field(*choice, "function");
      const json* name = function && function->is_object() ? field(*function, "name") : nullptr;
      if (choice->value("type", "function") != "function" || !name || !name->is_string()) {
        fail_param("tool_choice",
                   "'tool_choice' as an object must be {{\"type\": \"function\", \"function\": {{\"name\": …}}}}");
      }
      r.tool_call_required = true;
      r.forced_tool_name = name->get<std::string>();
      bool known = false;
      for (const auto& tool : r.tools) known = known || tool["function"]["name"] == r.forced_tool_name;
      if (!known) fail_param("tool_choice", "'tool_choice' names '{}', which is not among 'tools'", r.forced_tool_name);
    } else {
      fail_param("tool_choice", "'tool_choice' must be a string or an object");
    }
  }
  if (r.tool_call_required && r.tools.empty()) {
    fail_param("tool_choice", "'tool_choice' requires a tool call but 'tools' is empty");
  }
  r.parse_tool_calls = !r.tools.empty() && !tool_choice_none;

  if (const json* format = field(body, "response_format")) {
    if (!format->is_object() || !format->contains("type") || !(*format)["type"].is_string()) {
      fail_param("response_format", "'response_format' must be an object with a string 'type'");
    }
    const std::string type = (*format)["type"].get<std::string>();
    if (type == "json_object") {
      r.response_schema = json{{"type", "object"}};
    } else if (type == "json_schema") {
      const json* spec = field(*format, "json_schema");
      if (!spec || !spec->is_object()) {
        fail_param("response_format.json_schema", "'response_format.json_schema' must be an object");
      }
      const json* schema = field(*spec, "schema");
      if (schema && !schema->is_object() && !schema->is_boolean()) {
        fail_param("response_format.json_schema.schema", "'response_format.json_schema.schema' must be an object");
      }
      r.response_schema = schema ? *schema : json(true);
    } else if (type != "text") {
      fail_param("response_format.type", "'response_format.type' must be text, json_object or json_schema; got '{}'",
                 type);
    }
  }

  r.template_kwargs = json::object();
  if (const json* kwargs = field(body, "chat_template_kwargs")) {
    if (!kwargs->is_object()) fail_param("chat_template_kwargs", "'chat_template_kwargs' must be an object");
    r.template_kwargs = *kwargs;
    if (auto t = bool_field(*kwargs, "enable_thinking")) r.enable_thinking = *t;
  }
  if (auto t = bool_field(body, "enable_thinking")) r.enable_thinking = *t;
  if (const json* effort = field(body, "reasoning_effort")) {
    if (!effort->is_string())
      fail_param("reasoning_effort", "'reasoning_effort' must be a string, got {}", type_name(*effort));
    const ReasoningEffort level = parse_reasoning_effort(effort->get<std::string>(), "reasoning_effort",
                                                         ErrorStyle::OpenAI);
    if (!r.enable_thinking) r.enable_thinking = level.enable_thinking;  // an explicit enable_thinking wins
    r.reasoning_budget_tokens = level.budget_tokens;
    r.reasoning_effort = level.template_effort;
  }
  return r;
}

CompletionRequest parse_completion_request(const json& body) {
  CompletionRequest r;
  r.params = parse_generation_params(body);
  if (r.params.include_usage && !r.params.stream) r.params.include_usage = false;
  if (auto k = integer_field(body, "logprobs", 0, 20)) {
    r.params.logprobs = true;
    r.params.top_logprobs = int32_t(*k);
  }
  r.echo = bool_field(body, "echo").value_or(false);
  const json* prompt = field(body, "prompt");
  if (!prompt) fail_param("prompt", "'prompt' is required");
  auto as_ids = [&](const json& list) {
    std::vector<int32_t> ids;
    for (const auto& id : list) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
        fail_param("prompt", "'prompt' token ids must be non-negative integers");
      }
      ids.push_back(int32_t(id.get<int64_t>()));
    }
    return ids;
  };
  if (prompt->is_string()) {
    r.prompt_text = prompt->get<std::string>();
  } else if (prompt->is_array() && !prompt->empty() && (*prompt)[0].is_number()) {
    r.prompt_ids = as_ids(*prompt);
  } else if (prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_string()) {
    r.prompt_text = (*prompt)[0].get<std::string>();
  } else if (prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_array()) {
    r.prompt_ids = as_ids((*prompt)[0]);
  } else {
    fail_param("prompt", "'prompt' must be a string, one string in an array, or token ids (batches are not supported)");
  }
  if (r.prompt_ids.empty() && (!r.prompt_text || r.prompt_text->empty())) {
    fail_param("prompt", "'prompt' must not be empty");
  }
  return r;
}

}  // namespace llmesh::api
