// The session a request belongs to, read from any of the four APIs, so a
// router (llmesh route) or a server can keep one conversation, and the
// sub-agents that share its id, on the worker that holds its KV cache.
//
// Guarantees:
//   * The same conversation gives the same key on every turn: explicit ids are
//     used as sent, and the prompt fallback hashes only the part of the prompt
//     a later turn repeats byte for byte (system + the first user message),
//     with `cache_control` markers (which Claude Code moves to the last block
//     each turn) and Claude Code's per-conversation billing-header system
//     block left out.
//   * Never throws on a body of the wrong shape: unknown or mistyped fields
//     are skipped and the next source is tried; an empty key means "no
//     session" (an empty prompt and no id).
//
// Sources, first match wins:
//   1. the `x-session-id` header (the caller's explicit choice)
//   2. Anthropic `metadata.user_id`: Claude Code sends either a JSON-encoded
//      object with "session_id" or "user_<hash>_account_<uuid>_session_<uuid>";
//      the session id is used when present, else the whole string
//   3. Responses `prompt_cache_key` (Codex sends its conversation id)
//   4. a hash of the prompt's system part and of its first user turn, each cut
//      to its first `prefix_bytes` bytes (prompt_prefix_text with first_user_turn_only)
//
// To add a source: a new SessionKeySource value, a branch in session_key(), a
// case in session_key_source_name() and a unit test.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace llmesh::api {

// Which API a body was sent to; decides where its prompt lives.
enum class PromptApi { chat_completions, completions, anthropic_messages, responses };

enum class SessionKeySource { none, header, anthropic_user_id, prompt_cache_key, prompt_prefix };

struct SessionKey {
  std::string key;  // "" when source is none; for prompt_prefix, the prefix hash in 16 hex digits
  SessionKeySource source = SessionKeySource::none;
  uint64_t hash = 0;  // XXH3-64 of key (0 when none): what consistent hashing places
};

inline constexpr size_t kDefaultSessionPrefixBytes = 32768;

SessionKey session_key(const nlohmann::json& body, PromptApi api, std::string_view session_header,
                       size_t prefix_bytes = kDefaultSessionPrefixBytes);

// "header", "anthropic_user_id", "prompt_cache_key", "prompt_prefix", "none".
std::string_view session_key_source_name(SessionKeySource source);

// The session part of a Claude Code metadata.user_id: "session_id" of a
// JSON-encoded object, or what follows "_session_"; "" when it has neither.
std::string session_id_from_user_id(std::string_view user_id);

struct PromptTextOptions {
  bool first_user_turn_only = false;  // stop after the first user turn (the session fallback)
  bool include_tools = true;          // the tool list, after system (templates render it there)
};

// The prompt as canonical JSON text, in the order a chat template renders it:
// system (Anthropic `system`, Responses `instructions`), tools, then the turns
// (`messages`, `input`, or `prompt` for completions), one JSON value per line.
// Object keys are sorted, `cache_control` is removed at every depth, and
// billing-header system blocks are dropped, so turn N's text is a prefix of
// turn N+1's.
std::string prompt_prefix_text(const nlohmann::json& body, PromptApi api, const PromptTextOptions& options = {});

// The API a request path belongs to; false for paths without a prompt (/v1/models).
bool prompt_api_for_path(std::string_view path, PromptApi* api);

}  // namespace llmesh::api
