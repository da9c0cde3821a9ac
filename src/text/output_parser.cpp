#include "text/output_parser.h"

#include <algorithm>
#include <mutex>
#include <random>

#include <nlohmann/json.hpp>

namespace llmesh::text {

namespace {

// Length of the longest suffix of `text` that is a proper prefix of `tag`
// (the part that may still grow into the tag).
size_t partial_tag_suffix(std::string_view text, std::string_view tag) {
  if (tag.empty()) return 0;
  const size_t max_len = std::min(text.size(), tag.size() - 1);
  for (size_t len = max_len; len > 0; --len) {
    if (text.substr(text.size() - len) == tag.substr(0, len)) return len;
  }
  return 0;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return !prefix.empty() && text.substr(0, prefix.size()) == prefix;
}

// True when `text` is non-empty and could still grow into `tag`.
bool is_proper_prefix(std::string_view text, std::string_view tag) {
  return !text.empty() && text.size() < tag.size() && tag.substr(0, text.size()) == text;
}

std::string random_call_id() {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string id = "call_";
  std::lock_guard<std::mutex> lock(mu);
  for (int i = 0; i < 24; ++i) id += kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
  return id;
}

bool is_newline(char c) { return c == '\n' || c == '\r'; }
bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// End (one past the closing brace) of the JSON object starting at text[0] ==
// '{', by bracket depth outside strings; npos while it is still open. The
// object is validated later by the JSON parser.
size_t json_object_end(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return i + 1;
    }
  }
  return std::string_view::npos;
}

}  // namespace

void OutputDelta::append(OutputDelta&& other) {
  reasoning += other.reasoning;
  content += other.content;
  for (auto& call : other.tool_calls) tool_calls.push_back(std::move(call));
}

OutputParser::OutputParser(OutputParserOptions options) : options_(std::move(options)) {
  if (options_.parse_tool_calls) format_ = options_.tool_call_format;
  markers_ = tool_call_markers(format_);
  if (format_ == ToolCallFormat::Hermes) {
    markers_.call_open = options_.tool_call_open;
    markers_.call_close = options_.tool_call_close;
  }
  harmony_ = options_.tool_call_format == ToolCallFormat::Harmony;
  if (harmony_) {
    state_ = State::HarmonyHeader;  // the prompt ends with <|start|>assistant
    if (!options_.harmony_open_header.empty()) {
      OutputDelta none;  // a header of the prompt's is never output
      start_harmony_body(options_.harmony_open_header, none);
    }
  } else if (options_.parse_reasoning && options_.starts_in_reasoning) {
    state_ = State::Reasoning;
    skip_leading_newlines_ = true;
  }
}

std::vector<std::string> OutputParser::markers() const {
  std::vector<std::string> result;
  if (harmony_) {
    for (std::string_view token : {kHarmonyStart, kHarmonyEnd, kHarmonyMessage, kHarmonyChannel, kHarmonyConstrain,
                                   kHarmonyReturn, kHarmonyCall})
      result.emplace_back(token);
    return result;
  }
  if (options_.parse_reasoning) {
    result.push_back(options_.reasoning_open);
    result.push_back(options_.reasoning_close);
  }
  for (const std::string* marker : {&markers_.section_open, &markers_.call_open, &markers_.call_close,
                                    &markers_.section_close, &markers_.separator}) {
    if (!marker->empty()) result.push_back(*marker);
  }
  for (const std::string& tag : markers_.body_tags) result.push_back(tag);
  return result;
}

OutputDelta OutputParser::push(std::string_view text) {
  OutputDelta out;
  pending_.append(text);
  drain(out, /*at_end=*/false);
  return out;
}

OutputDelta OutputParser::finish() {
  OutputDelta out;
  drain(out, /*at_end=*/true);
  if (state_ == State::Reasoning && !held_newlines_.empty()) {
    out.reasoning += held_newlines_;
    held_newlines_.clear();
  }
  return out;
}

void OutputParser::drain(OutputDelta& out, bool at_end) {
  for (;;) {
    bool changed = false;
    switch (state_) {
      case State::Content:
        changed = drain_content(out, at_end);
        break;
      case State::Reasoning:
        changed = drain_reasoning(out, at_end);
        break;
      case State::ToolCall:
        changed = drain_tool_call(out, at_end);
        break;
      case State::JsonCalls:
        changed = drain_json_calls(out, at_end);
        break;
      case State::MistralCalls:
        changed = drain_mistral_calls(out, at_end);
        break;
      case State::HarmonyHeader:
        changed = drain_harmony_header(out, at_end);
        break;
      case State::HarmonyBody:
        changed = drain_harmony_body(out, at_end);
        break;
    }
    if (!changed) return;
  }
}

bool OutputParser::drain_content(OutputDelta& out, bool at_end) {
  if (format_ == ToolCallFormat::Llama3Json && !message_started_) {
    // The first visible character decides whether the message is JSON calls.
    const size_t start = pending_.find_first_not_of(" \t\r\n");
    if (start == std::string::npos) {
      if (!at_end) return false;  // only blanks so far: undecided
    } else {
      const std::string_view rest = std::string_view(pending_).substr(start);
      const bool at_json = rest.front() == '{';
      if (at_json || starts_with(rest, kLlama3PythonTag)) {
        pending_.erase(0, start + (at_json ? 0 : kLlama3PythonTag.size()));
        message_started_ = true;
        state_ = State::JsonCalls;
        return true;
      }
      const bool may_open_reasoning = options_.parse_reasoning && is_proper_prefix(rest, options_.reasoning_open);
      if (!at_end && (is_proper_prefix(rest, kLlama3PythonTag) || may_open_reasoning)) return false;
      // A reasoning block first leaves the decision to the text after it.
      if (!(options_.parse_reasoning && starts_with(rest, options_.reasoning_open))) message_started_ = true;
    }
  }

  // The earliest marker in the text, if any.
  struct Candidate {
    const std::string* marker;
    bool active;
  };
  const bool tools = format_ != ToolCallFormat::None;
  const Candidate candidates[] = {
      {&options_.reasoning_open, options_.parse_reasoning},
      {&markers_.call_open, tools},
      {&markers_.section_open, tools},
      {&markers_.section_close, tools},
  };
  size_t best_pos = std::string::npos;
  const std::string* best = nullptr;
  size_t keep = 0;
  for (const Candidate& candidate : candidates) {
    if (!candidate.active || candidate.marker->empty()) continue;
    const size_t pos = pending_.find(*candidate.marker);
    if (pos < best_pos) {
      best_pos = pos;
      best = candidate.marker;
    }
    if (!at_end) keep = std::max(keep, partial_tag_suffix(pending_, *candidate.marker));
  }
  if (best != nullptr) {
    emit(out, std::string_view(pending_).substr(0, best_pos));
    pending_.erase(0, best_pos + best->size());
    if (best == &options_.reasoning_open) {
      state_ = State::Reasoning;
      skip_leading_newlines_ = true;
    } else if (best == &markers_.call_open) {
      state_ = State::ToolCall;
    } else if (format_ == ToolCallFormat::Mistral) {
      state_ = State::MistralCalls;  // [TOOL_CALLS] opens the calls themselves
    } else {
      skip_leading_newlines_ = true;  // a section marker: dropped, like the layout newlines around it
    }
    return true;
  }
  emit(out, std::string_view(pending_).substr(0, pending_.size() - keep));
  pending_.erase(0, pending_.size() - keep);
  return false;
}

bool OutputParser::drain_reasoning(OutputDelta& out, bool at_end) {
  const size_t pos = pending_.find(options_.reasoning_close);
  if (pos != std::string::npos) {
    emit(out, std::string_view(pending_).substr(0, pos));
    held_newlines_.clear();  // newlines just before </think> are layout
    pending_.erase(0, pos + options_.reasoning_close.size());
    state_ = State::Content;
    skip_leading_newlines_ = true;
    return true;
  }
  const size_t keep = at_end ? 0 : partial_tag_suffix(pending_, options_.reasoning_close);
  emit(out, std::string_view(pending_).substr(0, pending_.size() - keep));
  pending_.erase(0, pending_.size() - keep);
  return false;
}

bool OutputParser::drain_tool_call(OutputDelta& out, bool at_end) {
  // The body is only judged once it is closed.
  const size_t pos = pending_.find(markers_.call_close);
  if (pos != std::string::npos) {
    end_tool_call(out, std::string_view(pending_).substr(0, pos));
    pending_.erase(0, pos + markers_.call_close.size());
    state_ = State::Content;
    skip_leading_newlines_ = true;
    return true;
  }
  if (at_end) {
    // Unclosed (cut off by max_tokens or a stop): the text as it came.
    state_ = State::Content;
    std::string raw = markers_.call_open + pending_;
    pending_.clear();
    emit(out, raw);
  }
  return false;
}

bool OutputParser::drain_json_calls(OutputDelta& out, bool at_end) {
  // Blanks (and ";" between calls) are layout.
  size_t start = 0;
  while (start < pending_.size() && (is_blank(pending_[start]) || (pending_[start] == ';' && num_json_calls_ > 0))) {
    ++start;
  }
  pending_.erase(0, start);
  if (pending_.empty()) {
    if (at_end) state_ = State::Content;
    return false;
  }
  if (pending_.front() != '{') {
    state_ = State::Content;  // text after the calls (or after <|python_tag|>) is ordinary content
    return true;
  }
  const size_t end = json_object_end(pending_);
  if (end == std::string::npos) {
    if (!at_end) return false;
    state_ = State::Content;  // cut off: the text as it came
    return true;
  }
  const std::string_view object = std::string_view(pending_).substr(0, end);
  std::string name;
  std::string arguments_json;
  if (llmesh::text::parse_tool_call_body(ToolCallFormat::Llama3Json, object, &name, &arguments_json)) {
    add_tool_call(out, std::move(name), std::move(arguments_json));
    ++num_json_calls_;
  } else {
    emit(out, object);  // ordinary JSON output, not a call
    state_ = State::Content;
  }
  pending_.erase(0, end);
  return true;
}

bool OutputParser::drain_mistral_calls(OutputDelta& out, bool at_end) {
  // The calls as they came, for output that turns out not to be calls.
  auto give_up = [&] {
    std::string raw(kMistralToolCalls);
    raw += pending_;
    pending_.clear();
    state_ = State::Content;
    emit(out, raw);
    return false;
  };
  const size_t start = pending_.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return at_end ? give_up() : false;
  if (pending_[start] == '[') {  // v3: one array of {"name", "arguments", "id"}
    const size_t end = json_object_end(std::string_view(pending_).substr(start));
    if (end == std::string::npos) return at_end ? give_up() : false;
    const nlohmann::json array =
        nlohmann::json::parse(pending_.begin() + long(start), pending_.begin() + long(start + end), nullptr, false);
    std::vector<ParsedToolCall> calls;
    for (const nlohmann::json& element : array.is_array() ? array : nlohmann::json::array()) {
      ParsedToolCall call;
      if (!llmesh::text::parse_tool_call_body(ToolCallFormat::Mistral, element.dump(), &call.name,
                                              &call.arguments_json))
        break;
      const auto id = element.find("id");
      if (id != element.end() && id->is_string() && is_mistral_call_id(id->get<std::string>()))
        call.id = id->get<std::string>();
      calls.push_back(std::move(call));
    }
    if (calls.empty() || calls.size() != array.size()) return give_up();
    for (ParsedToolCall& call : calls)
      add_tool_call(out, std::move(call.name), std::move(call.arguments_json), std::move(call.id));
    pending_.erase(0, start + end);
    state_ = State::Content;
    skip_leading_newlines_ = true;
    return true;
  }
  // v11+: NAME[ARGS]{…} (or NAME[CALL_ID]ID[ARGS]{…}), one call per [TOOL_CALLS].
  const size_t args = pending_.find(kMistralArgs);
  if (args == std::string::npos) {
    // A name is short and has no JSON in it: anything else is not a call.
    const bool may_be_name = pending_.size() < 256 && pending_.find_first_of("{}\n") == std::string::npos;
    return at_end || !may_be_name ? give_up() : false;
  }
  const size_t object = pending_.find_first_not_of(" \t\r\n", args + kMistralArgs.size());
  if (object == std::string::npos) return at_end ? give_up() : false;
  const size_t end = json_object_end(std::string_view(pending_).substr(object));
  if (end == std::string::npos) return at_end ? give_up() : false;
  std::string name, arguments_json;
  if (!llmesh::text::parse_tool_call_body(ToolCallFormat::Mistral, std::string_view(pending_).substr(0, object + end),
                                          &name, &arguments_json))
    return give_up();
  std::string id;
  if (const size_t id_at = pending_.find(kMistralCallId); id_at < args) {
    id = std::string(pending_, id_at + kMistralCallId.size(), args - id_at - kMistralCallId.size());
    if (!is_mistral_call_id(id)) id.clear();
  }
  add_tool_call(out, std::move(name), std::move(arguments_json), std::move(id));
  pending_.erase(0, object + end);
  state_ = State::Content;
  skip_leading_newlines_ = true;
  return true;
}

void OutputParser::emit(OutputDelta& out, std::string_view text) {
  if (skip_leading_newlines_) {
    size_t n = 0;
    while (n < text.size() && is_newline(text[n])) ++n;
    text.remove_prefix(n);
    if (text.empty()) return;
    skip_leading_newlines_ = false;
  }
  if (state_ != State::Reasoning) {
    out.content.append(text);
    return;
  }
  // Hold back trailing newlines: they are dropped if </think> comes next.
  std::string joined = held_newlines_;
  joined.append(text);
  size_t end = joined.size();
  while (end > 0 && is_newline(joined[end - 1])) --end;
  out.reasoning.append(joined, 0, end);
  held_newlines_ = joined.substr(end);
}

void OutputParser::end_tool_call(OutputDelta& out, std::string_view body) {
  std::string name;
  std::string arguments_json;
  if (llmesh::text::parse_tool_call_body(format_, body, &name, &arguments_json, &options_.tool_parameter_types)) {
    add_tool_call(out, std::move(name), std::move(arguments_json));
    return;
  }
  out.content += markers_.call_open;
  out.content.append(body);
  out.content += markers_.call_close;
}

void OutputParser::add_tool_call(OutputDelta& out, std::string name, std::string arguments_json, std::string id) {
  ParsedToolCall call;
  // Mistral's templates take back only ids of 9 alphanumerics.
  if (id.empty()) id = format_ == ToolCallFormat::Mistral ? mistral_call_id(random_call_id()) : random_call_id();
  call.id = std::move(id);
  call.name = std::move(name);
  call.arguments_json = std::move(arguments_json);
  out.tool_calls.push_back(std::move(call));
}

bool OutputParser::parse_tool_call_body(std::string_view body, ParsedToolCall* call) {
  std::string name;
  std::string arguments_json;
  if (!llmesh::text::parse_tool_call_body(ToolCallFormat::Hermes, body, &name, &arguments_json)) return false;
  call->id = random_call_id();
  call->name = std::move(name);
  call->arguments_json = std::move(arguments_json);
  return true;
}

bool ends_inside_block(std::string_view prompt, std::string_view open, std::string_view close) {
  const size_t open_pos = prompt.rfind(open);
  if (open_pos == std::string_view::npos) return false;
  const size_t close_pos = prompt.rfind(close);
  return close_pos == std::string_view::npos || close_pos < open_pos;
}

}  // namespace llmesh::text
