#include "api/responses_items.h"

#include <array>
#include <random>

#include <fmt/format.h>

namespace llmesh::api {

using nlohmann::json;

namespace {

// Marks encrypted_content this server wrote (a version tag leaves room to change the encoding).
constexpr std::string_view kReasoningTag = "llmesh.reasoning.v1:";
constexpr std::string_view kBase64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = uint32_t(uint8_t(bytes[i])) << 16 | uint32_t(uint8_t(bytes[i + 1])) << 8 | uint8_t(bytes[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out += kBase64Alphabet[(v >> shift) & 63];
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
    if (rest == 2) v |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    out += kBase64Alphabet[(v >> 18) & 63];
    out += kBase64Alphabet[(v >> 12) & 63];
    out += rest == 2 ? kBase64Alphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  std::array<int, 256> value{};
  value.fill(-1);
  for (size_t i = 0; i < kBase64Alphabet.size(); ++i) value[uint8_t(kBase64Alphabet[i])] = int(i);
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    uint32_t v = 0;
    int num_padding = 0;
    for (size_t j = 0; j < 4; ++j) {
      const char c = text[i + j];
      if (c == '=' && i + 4 == text.size() && j >= 2) {
        ++num_padding;
        v <<= 6;
        continue;
      }
      if (num_padding > 0) return std::nullopt;  // data after padding
      const int x = value[uint8_t(c)];
      if (x < 0) return std::nullopt;
      v = v << 6 | uint32_t(x);
    }
    out += char((v >> 16) & 0xff);
    if (num_padding < 2) out += char((v >> 8) & 0xff);
    if (num_padding < 1) out += char(v & 0xff);
  }
  return out;
}

}  // namespace

std::string make_item_id(std::string_view prefix) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{}{:016x}{:016x}", prefix, rng(), rng());
}

json reasoning_item_json(const std::string& item_id, const std::string& text, bool announced_only,
                         const std::optional<std::string>& encrypted_content) {
  json summary = json::array();
  if (!announced_only) summary.push_back({{"type", "summary_text"}, {"text", text}});
  json item = {{"id", item_id}, {"type", "reasoning"}, {"summary", summary}};
  if (encrypted_content) item["encrypted_content"] = *encrypted_content;
  return item;
}

json output_text_part_json(const std::string& text) {
  return {{"type", "output_text"}, {"text", text}, {"annotations", json::array()}, {"logprobs", json::array()}};
}

json message_item_json(const std::string& item_id, const std::string& text, const std::string& status,
                       bool announced_only) {
  json content = json::array();
  if (!announced_only) content.push_back(output_text_part_json(text));
  return {{"id", item_id}, {"type", "message"}, {"status", status}, {"role", "assistant"}, {"content", content}};
}

json function_call_item_json(const std::string& item_id, const std::string& call_id, const std::string& name,
                             const std::string& arguments, const std::string& status) {
  return {{"id", item_id}, {"type", "function_call"}, {"status", status}, {"call_id", call_id},
          {"name", name},  {"arguments", arguments}};
}

std::string encode_reasoning_content(std::string_view text) { return std::string(kReasoningTag) + base64_encode(text); }

std::optional<std::string> decode_reasoning_content(std::string_view encrypted_content) {
  if (encrypted_content.substr(0, kReasoningTag.size()) != kReasoningTag) return std::nullopt;
  return base64_decode(encrypted_content.substr(kReasoningTag.size()));
}

}  // namespace llmesh::api
