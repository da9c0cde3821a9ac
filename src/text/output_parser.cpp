#include "text/output_parser.h"

#include <algorithm>
#include <mutex>
#include <random>

#include <nlohmann/json.hpp>

namespace llmesh {

namespace {

// Length of the longest suffix of `text` that is a proper prefix of `tag`
// (the part that may still grow into the tag).
size_t partial_tag_suffix(std::string_view text, std::string_view tag) {
  const size_t max_len = std::min(text.size(), tag.size() - 1);
  for (size_t len = max_len; len > 0; --len) {
    if (text.substr(text.size() - len) == tag.substr(0, len)) return len;
  }
  return 0;
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

}  // namespace

void OutputDelta::append(OutputDelta&& other) {
  reasoning += other.reasoning;
  content += other.content;
  for (auto& call : other.tool_calls) tool_calls.push_back(std::move(call));
}

OutputParser::OutputParser(OutputParserOptions options) : options_(std::move(options)) {
  if (options_.parse_reasoning && options_.starts_in_reasoning) {
    state_ = State::Reasoning;
    skip_leading_newlines_ = true;
  }
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
    if (state_ == State::Content) {
      size_t think_pos = options_.parse_reasoning ? pending_.find(options_.reasoning_open) : std::string::npos;
      size_t tool_pos = options_.parse_tool_calls ? pending_.find(options_.tool_call_open) : std::string::npos;
      const size_t pos = std::min(think_pos, tool_pos);
      if (pos != std::string::npos) {
        emit(out, std::string_view(pending_).substr(0, pos));
        const bool is_think = pos == think_pos;
        pending_.erase(0, pos + (is_think ? options_.reasoning_open : options_.tool_call_open).size());
        state_ = is_think ? State::Reasoning : State::ToolCall;
        skip_leading_newlines_ = is_think;
        continue;
      }
      size_t keep = 0;
      if (!at_end) {
        if (options_.parse_reasoning) keep = std::max(keep, partial_tag_suffix(pending_, options_.reasoning_open));
        if (options_.parse_tool_calls) keep = std::max(keep, partial_tag_suffix(pending_, options_.tool_call_open));
      }
      emit(out, std::string_view(pending_).substr(0, pending_.size() - keep));
      pending_.erase(0, pending_.size() - keep);
      return;
    }

    if (state_ == State::Reasoning) {
      const size_t pos = pending_.find(options_.reasoning_close);
      if (pos != std::string::npos) {
        emit(out, std::string_view(pending_).substr(0, pos));
        held_newlines_.clear();  // newlines just before </think> are layout
        pending_.erase(0, pos + options_.reasoning_close.size());
        state_ = State::Content;
        skip_leading_newlines_ = true;
        continue;
      }
      const size_t keep = at_end ? 0 : partial_tag_suffix(pending_, options_.reasoning_close);
      emit(out, std::string_view(pending_).substr(0, pending_.size() - keep));
      pending_.erase(0, pending_.size() - keep);
      return;
    }

    // State::ToolCall: the body is only judged once it is closed.
    const size_t pos = pending_.find(options_.tool_call_close);
    if (pos != std::string::npos) {
      end_tool_call(out, std::string_view(pending_).substr(0, pos));
      pending_.erase(0, pos + options_.tool_call_close.size());
      state_ = State::Content;
      skip_leading_newlines_ = true;
      continue;
    }
    if (at_end) {
      // Unclosed (cut off by max_tokens or a stop): the text as it came.
      state_ = State::Content;
      std::string raw = options_.tool_call_open + pending_;
      pending_.clear();
      emit(out, raw);
    }
    return;
  }
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
  ParsedToolCall call;
  if (parse_tool_call_body(body, &call)) {
    out.tool_calls.push_back(std::move(call));
    return;
  }
  out.content += options_.tool_call_open;
  out.content.append(body);
  out.content += options_.tool_call_close;
}

bool OutputParser::parse_tool_call_body(std::string_view body, ParsedToolCall* call) {
  nlohmann::json parsed = nlohmann::json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return false;
  auto name = parsed.find("name");
  if (name == parsed.end() || !name->is_string() || name->get_ref<const std::string&>().empty()) return false;
  auto arguments = parsed.find("arguments");
  if (arguments == parsed.end()) arguments = parsed.find("parameters");  // Hermes variants
  std::string arguments_json = "{}";
  if (arguments != parsed.end()) {
    if (arguments->is_object()) {
      arguments_json = arguments->dump();
    } else if (arguments->is_string()) {
      arguments_json = arguments->get<std::string>();  // already serialized by the model
    } else {
      return false;
    }
  }
  call->id = random_call_id();
  call->name = name->get<std::string>();
  call->arguments_json = std::move(arguments_json);
  return true;
}

bool ends_inside_block(std::string_view prompt, std::string_view open, std::string_view close) {
  const size_t open_pos = prompt.rfind(open);
  if (open_pos == std::string_view::npos) return false;
  const size_t close_pos = prompt.rfind(close);
  return close_pos == std::string_view::npos || close_pos < open_pos;
}

}  // namespace llmesh
