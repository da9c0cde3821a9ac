// What a client asks of the prefix cache beyond LRU. Anthropic's
// `cache_control: {"type": "ephemeral", "ttl": "5m" | "1h"}` breakpoints (on
// system blocks, tools, message content blocks, or the top level) ask that
// the prefix they end be kept for their TTL: llmesh pins the prompt's cached
// blocks for the longest TTL the request names, once it finishes (a
// breakpoint ends a prefix of the prompt, so pinning the whole prompt keeps
// at least that; Claude Code puts its last breakpoint on the newest message).
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

namespace llmesh::api {

inline constexpr int64_t kCacheTtlDefaultSeconds = 5 * 60;  // "ephemeral" without a ttl
inline constexpr int64_t kCacheTtlLongSeconds = 60 * 60;    // "1h"

// The longest cache_control TTL in an Anthropic Messages body, in seconds (0:
// no breakpoint). 400 naming the field for a ttl other than "5m" or "1h".
int64_t anthropic_cache_ttl_seconds(const nlohmann::ordered_json& body);

}  // namespace llmesh::api
