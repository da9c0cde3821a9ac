// The OutputParser's Harmony mode (gpt-oss): the output is a run of messages,
// each a header and a body, framed by special tokens (output_parser.h lists
// what each kind of message becomes).
//
//   HarmonyHeader --<|message|>--> HarmonyBody --<|end|> <|return|> <|call|> <|start|>--> HarmonyHeader
//
// The header is held back until it is complete, so nothing is emitted while
// it may still change what its body is; a body streams as it comes (a call's
// body is held to its end), holding back only what may begin an end token.
#include <algorithm>
#include <array>
#include <optional>

#include "text/output_parser.h"

namespace llmesh::text {

namespace {

// A header longer than this without <|message|> is not one: the text is content.
constexpr size_t kMaxHeaderBytes = 256;

// What ends a header early (a message cut short), and what ends a body.
constexpr std::array<std::string_view, 4> kHarmonyEndTokens = {kHarmonyEnd, kHarmonyReturn, kHarmonyCall,
                                                               kHarmonyStart};

struct Found {
  size_t pos = std::string_view::npos;
  std::string_view token;
};

// The earliest of `tokens` in `text`.
template <size_t N>
Found find_first(std::string_view text, const std::array<std::string_view, N>& tokens) {
  Found found;
  for (std::string_view token : tokens) {
    const size_t pos = text.find(token);
    if (pos < found.pos) found = {pos, token};
  }
  return found;
}

// Length of the longest suffix of `text` that is a proper prefix of one of `tokens`.
template <size_t N>
size_t partial_token_suffix(std::string_view text, const std::array<std::string_view, N>& tokens) {
  size_t keep = 0;
  for (std::string_view token : tokens) {
    for (size_t len = std::min(text.size(), token.size() - 1); len > keep; --len) {
      if (text.substr(text.size() - len) == token.substr(0, len)) {
        keep = len;
        break;
      }
    }
  }
  return keep;
}

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

}  // namespace

bool OutputParser::drain_harmony_header(OutputDelta& out, bool at_end) {
  // A message may open with <|start|> (the first one's is in the prompt).
  if (starts_with(pending_, kHarmonyStart)) {
    pending_.erase(0, kHarmonyStart.size());
    return true;
  }
  if (pending_.empty() || (!at_end && starts_with(kHarmonyStart, pending_))) return false;

  static constexpr std::array<std::string_view, 5> kHeaderEnds = {kHarmonyMessage, kHarmonyEnd, kHarmonyReturn,
                                                                  kHarmonyCall, kHarmonyStart};
  Found found = find_first(std::string_view(pending_), kHeaderEnds);
  if (found.pos != std::string::npos && found.pos > kMaxHeaderBytes) found = {};  // too far to be a header's
  if (found.pos == std::string::npos) {
    // The longest marker could still begin within the header's bytes: wait, unless the output ended.
    const bool may_be_header = pending_.size() < kMaxHeaderBytes + kHarmonyMessage.size();
    if (!at_end && may_be_header) return false;
    if (at_end) {  // cut off mid-header, or no harmony at all: the text as written
      out.content += pending_;
      pending_.clear();
      return false;
    }
    // No header: an answer without one. Its first bytes are content, the rest a body from here (cut
    // at a fixed place, on a character boundary, so the result does not depend on the pieces).
    size_t cut = kMaxHeaderBytes;
    while (cut > 0 && (static_cast<unsigned char>(pending_[cut]) & 0xC0) == 0x80) --cut;
    out.content.append(pending_, 0, cut);
    pending_.erase(0, cut);
    harmony_body_ = HarmonyBody::Content;
    state_ = State::HarmonyBody;
    return true;
  }
  const std::string_view header = std::string_view(pending_).substr(0, found.pos);
  if (found.token != kHarmonyMessage) {
    // A header cut short by an end token: the text as written, and the next message.
    out.content.append(header);
    pending_.erase(0, found.pos + (found.token == kHarmonyStart ? 0 : found.token.size()));
    return true;
  }
  start_harmony_body(header, out);
  pending_.erase(0, found.pos + kHarmonyMessage.size());
  return true;
}

void OutputParser::start_harmony_body(std::string_view header, OutputDelta& out) {
  const HarmonyHeader parts = parse_harmony_header(header);
  harmony_header_.clear();
  if (parts.recipient.empty()) {
    harmony_body_ = parts.channel == "analysis" ? HarmonyBody::Reasoning : HarmonyBody::Content;
  } else if (format_ == ToolCallFormat::Harmony && starts_with(parts.recipient, kHarmonyFunctions)) {
    harmony_body_ = HarmonyBody::Call;
    harmony_header_.assign(header);
    harmony_header_ += kHarmonyMessage;
  } else {
    // A recipient that is not turned into a call (a built-in tool, or tool calls off): the message as written.
    harmony_body_ = HarmonyBody::Content;
    out.content.append(header);
    out.content += kHarmonyMessage;
  }
  state_ = State::HarmonyBody;
}

std::optional<std::string> harmony_open_header(std::string_view prompt) {
  const size_t start = prompt.rfind(kHarmonyStart);
  if (start == std::string_view::npos) return std::nullopt;
  const std::string_view message = prompt.substr(start + kHarmonyStart.size());
  const size_t body = message.find(kHarmonyMessage);
  if (body == std::string_view::npos) return std::nullopt;
  // The body must still be open: no end token after <|message|>.
  const std::string_view rest = message.substr(body + kHarmonyMessage.size());
  for (std::string_view token : kHarmonyEndTokens)
    if (rest.find(token) != std::string_view::npos) return std::nullopt;
  return std::string(message.substr(0, body));
}

bool OutputParser::drain_harmony_body(OutputDelta& out, bool at_end) {
  const Found found = find_first(std::string_view(pending_), kHarmonyEndTokens);
  if (harmony_body_ == HarmonyBody::Call) {
    // Judged once it ends: by its end token, or by the end of output (<|call|> stops generation).
    if (found.pos == std::string::npos && !at_end) return false;
    const size_t end = std::min(found.pos, pending_.size());
    end_harmony_call(out, std::string_view(pending_).substr(0, end));
  } else {
    const size_t end = found.pos != std::string::npos ? found.pos
                       : at_end                       ? pending_.size()
                                : pending_.size() - partial_token_suffix(pending_, kHarmonyEndTokens);
    std::string& target = harmony_body_ == HarmonyBody::Reasoning ? out.reasoning : out.content;
    target.append(pending_, 0, end);
    if (found.pos == std::string::npos) {
      pending_.erase(0, end);
      return false;
    }
  }
  // The next message's <|start|> stays for the header to drop.
  pending_.erase(0, found.pos == std::string::npos
                        ? pending_.size()
                        : found.pos + (found.token == kHarmonyStart ? 0 : found.token.size()));
  state_ = State::HarmonyHeader;
  return true;
}

void OutputParser::end_harmony_call(OutputDelta& out, std::string_view body) {
  std::string message = harmony_header_;
  message.append(body);
  std::string name;
  std::string arguments_json;
  if (llmesh::text::parse_tool_call_body(ToolCallFormat::Harmony, message, &name, &arguments_json)) {
    add_tool_call(out, std::move(name), std::move(arguments_json));
  } else {
    out.content += message;  // not a call (cut off, or arguments that are no JSON object): as written
  }
  harmony_header_.clear();
}

}  // namespace llmesh::text
