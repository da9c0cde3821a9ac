#include "api/session_key.h"

#include <fmt/format.h>
#include <xxhash.h>

#include "api/anthropic_request.h"

namespace llmesh::api {

using nlohmann::json;

namespace {

uint64_t hash_text(std::string_view text) { return XXH3_64bits(text.data(), text.size()); }

const json* string_field(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  if (it == object.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) return nullptr;
  return &*it;
}

// A copy without `cache_control` members, at any depth.
json without_cache_control(const json& value) {
  if (value.is_object()) {
    json out = json::object();
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (it.key() != "cache_control") out[it.key()] = without_cache_control(it.value());
    }
    return out;
  }
  if (value.is_array()) {
    json out = json::array();
    for (const json& v : value) out.push_back(without_cache_control(v));
    return out;
  }
  return value;
}

void append_line(std::string& out, const json& value) {
  out += value.dump(-1, ' ', false, json::error_handler_t::replace);
  out += '\n';
}

// Anthropic `system`: a string, or text blocks minus the billing header.
void append_anthropic_system(std::string& out, const json& system) {
  if (system.is_string()) {
    append_line(out, system);
    return;
  }
  if (!system.is_array()) return;
  json kept = json::array();
  for (const json& block : system) {
    const json* text = string_field(block, "text");
    if (text != nullptr && is_billing_header_block(text->get_ref<const std::string&>())) continue;
    kept.push_back(without_cache_control(block));
  }
  append_line(out, kept);
}

bool is_user_turn(const json& item) {
  if (!item.is_object()) return false;
  auto role = item.find("role");
  return role != item.end() && role->is_string() && role->get_ref<const std::string&>() == "user";
}

// The turns, one per line; with first_user_turn_only, up to and including the first user turn.
void append_turns(std::string& out, const json& turns, bool first_user_turn_only) {
  if (turns.is_string()) {  // Responses `input` as one string: a single user turn
    append_line(out, turns);
    return;
  }
  if (!turns.is_array()) return;
  for (const json& turn : turns) {
    append_line(out, without_cache_control(turn));
    if (first_user_turn_only && is_user_turn(turn)) return;
  }
}

}  // namespace

std::string session_id_from_user_id(std::string_view user_id) {
  if (!user_id.empty() && user_id.front() == '{') {
    const json parsed = json::parse(user_id, nullptr, /*allow_exceptions=*/false);
    if (const json* id = string_field(parsed, "session_id")) return id->get<std::string>();
    return "";
  }
  constexpr std::string_view marker = "_session_";
  const size_t at = user_id.rfind(marker);
  if (at == std::string_view::npos || at + marker.size() >= user_id.size()) return "";
  return std::string(user_id.substr(at + marker.size()));
}

std::string prompt_prefix_text(const json& body, PromptApi api, const PromptTextOptions& options) {
  std::string out;
  if (!body.is_object()) return out;
  auto member = [&](const char* key) -> const json* {
    auto it = body.find(key);
    return it == body.end() || it->is_null() ? nullptr : &*it;
  };
  switch (api) {
    case PromptApi::completions:
      if (const json* prompt = member("prompt")) append_line(out, *prompt);
      return out;
    case PromptApi::anthropic_messages:
      if (const json* system = member("system")) append_anthropic_system(out, *system);
      if (options.include_tools)
        if (const json* tools = member("tools")) append_line(out, without_cache_control(*tools));
      if (const json* messages = member("messages")) append_turns(out, *messages, options.first_user_turn_only);
      return out;
    case PromptApi::responses:
      if (const json* instructions = member("instructions")) append_line(out, *instructions);
      if (options.include_tools)
        if (const json* tools = member("tools")) append_line(out, *tools);
      if (const json* input = member("input")) append_turns(out, *input, options.first_user_turn_only);
      return out;
    case PromptApi::chat_completions:
      if (options.include_tools)
        if (const json* tools = member("tools")) append_line(out, *tools);
      if (const json* messages = member("messages")) append_turns(out, *messages, options.first_user_turn_only);
      return out;
  }
  return out;
}

SessionKey session_key(const json& body, PromptApi api, std::string_view session_header, size_t prefix_bytes) {
  SessionKey result;
  auto take = [&](std::string key, SessionKeySource source) {
    result.hash = hash_text(key);
    result.key = std::move(key);
    result.source = source;
    return result;
  };
  if (!session_header.empty()) return take(std::string(session_header), SessionKeySource::header);
  if (body.is_object()) {
    if (api == PromptApi::anthropic_messages) {
      auto metadata = body.find("metadata");
      if (metadata != body.end()) {
        if (const json* user_id = string_field(*metadata, "user_id")) {
          const std::string& whole = user_id->get_ref<const std::string&>();
          std::string session = session_id_from_user_id(whole);
          return take(session.empty() ? whole : std::move(session), SessionKeySource::anthropic_user_id);
        }
      }
    }
    if (const json* cache_key = string_field(body, "prompt_cache_key"))
      return take(cache_key->get<std::string>(), SessionKeySource::prompt_cache_key);
  }
  const std::string text = prompt_prefix_text(body, api, {.first_user_turn_only = true, .include_tools = false});
  if (text.empty()) return result;
  // The system part and the first user turn are bounded apart, so a system prompt
  // longer than prefix_bytes (shared by every session of an agent) cannot push the
  // user turn, which tells the sessions apart, out of the hash.
  const size_t last_line = text.rfind('\n', text.size() - 2);  // text ends with '\n'
  std::string_view system_part, user_turn(text);
  if (last_line != std::string::npos) {
    system_part = std::string_view(text).substr(0, last_line + 1);
    user_turn = std::string_view(text).substr(last_line + 1);
  }
  const std::string bounded = std::string(system_part.substr(0, prefix_bytes)) + "\x1f" +
                              std::string(user_turn.substr(0, prefix_bytes));
  return take(fmt::format("{:016x}", hash_text(bounded)), SessionKeySource::prompt_prefix);
}

std::string_view session_key_source_name(SessionKeySource source) {
  switch (source) {
    case SessionKeySource::header: return "header";
    case SessionKeySource::anthropic_user_id: return "anthropic_user_id";
    case SessionKeySource::prompt_cache_key: return "prompt_cache_key";
    case SessionKeySource::prompt_prefix: return "prompt_prefix";
    case SessionKeySource::none: break;
  }
  return "none";
}

bool prompt_api_for_path(std::string_view path, PromptApi* api) {
  if (path == "/v1/chat/completions") *api = PromptApi::chat_completions;
  else if (path == "/v1/completions") *api = PromptApi::completions;
  else if (path == "/v1/messages" || path == "/v1/messages/count_tokens") *api = PromptApi::anthropic_messages;
  else if (path == "/v1/responses") *api = PromptApi::responses;
  else return false;
  return true;
}

}  // namespace llmesh::api
