#define PCRE2_CODE_UNIT_WIDTH 8
#include "text/pretokenizer.h"

#include <pcre2.h>

#include "core/error.h"
#include "text/utf8.h"

namespace llmesh::text {

namespace {

// The pre-tokenizer regexes of the model families llmesh knows, as their
// tokenizer.json files state them (GGUF files only carry the family's name).
constexpr std::string_view kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kDeepSeekV3Digits = R"(\p{N}{1,3})";
constexpr std::string_view kDeepSeekV3Cjk = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+";
constexpr std::string_view kDeepSeekV3Words =
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
    "?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";
// Mistral's Tekken (Nemo, Small 3.x, Devstral): case-aware words, single digits.
constexpr std::string_view kTekkenPattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// o200k (gpt-oss, GPT-4o; llama.cpp's "gpt-4o"): tekken's word classes with English contractions
// folded into the words, and digits in runs of up to three.
constexpr std::string_view kO200kPattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Widens `\s` and `\S` by U+0085 (see the header). Other syntax is copied as is.
std::string widen_whitespace_classes(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size() + 16);
  bool in_class = false;
  size_t class_start = 0;  // index just after '[' or '[^'
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char next = pattern[i + 1];
      if (next == 's') {
        out += in_class ? "\\s\\x{85}" : "[\\s\\x{85}]";
      } else if (next == 'S' && !in_class) {
        out += "[^\\s\\x{85}]";
      } else {
        out += c;
        out += next;
      }
      ++i;
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out += c;
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      class_start = i + 1;
      continue;
    }
    if (in_class && c == '[' && i + 1 < pattern.size() && pattern[i + 1] == ':') {
      const size_t end = pattern.find(":]", i + 2);
      if (end != std::string_view::npos) {
        out.append(pattern.substr(i, end + 2 - i));
        i = end + 1;
        continue;
      }
    }
    if (in_class && c == ']' && i != class_start) in_class = false;
    out += c;
  }
  return out;
}

// Per-thread matching state: PCRE2 match data and a JIT stack large enough for
// long whitespace runs and long words.
struct MatchScratch {
  pcre2_match_data* match_data = nullptr;
  pcre2_match_context* match_context = nullptr;
  pcre2_jit_stack* jit_stack = nullptr;

  MatchScratch() {
    match_data = pcre2_match_data_create(1, nullptr);
    match_context = pcre2_match_context_create(nullptr);
    jit_stack = pcre2_jit_stack_create(64 * 1024, 8 * 1024 * 1024, nullptr);
    if (match_context != nullptr && jit_stack != nullptr) {
      pcre2_jit_stack_assign(match_context, nullptr, jit_stack);
    }
  }
  ~MatchScratch() {
    pcre2_match_data_free(match_data);
    pcre2_match_context_free(match_context);
    pcre2_jit_stack_free(jit_stack);
  }
};

MatchScratch& match_scratch() {
  thread_local MatchScratch scratch;
  return scratch;
}

}  // namespace

struct PreTokenizer::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

PreTokenizer::PreTokenizer(std::vector<std::string> patterns) : patterns_(std::move(patterns)) {
  check(!patterns_.empty(), "pre-tokenizer: no regex patterns given");
  for (const std::string& pattern : patterns_) {
    const std::string adapted = widen_whitespace_classes(pattern);
    int error_code = 0;
    PCRE2_SIZE error_offset = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(adapted.data()), adapted.size(),
                                     PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error_code,
                                     &error_offset, nullptr);
    if (code == nullptr) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(error_code, message, sizeof(message));
      fail("pre-tokenizer regex does not compile at offset {}: {} (pattern: {})", error_offset,
           reinterpret_cast<const char*>(message), pattern);
    }
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter when JIT is unavailable
    auto compiled = std::make_unique<Compiled>();
    compiled->code = code;
    compiled_.push_back(std::move(compiled));
  }
}

PreTokenizer::~PreTokenizer() = default;
PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;

std::vector<std::string> PreTokenizer::patterns_for(std::string_view name) {
  if (name == "qwen2") return {std::string(kQwen2Pattern)};
  if (name == "llama3" || name == "llama-bpe") return {std::string(kLlama3Pattern)};
  if (name == "deepseek-v3") {
    return {std::string(kDeepSeekV3Digits), std::string(kDeepSeekV3Cjk), std::string(kDeepSeekV3Words)};
  }
  if (name == "tekken") return {std::string(kTekkenPattern)};
  if (name == "gpt-4o" || name == "o200k") return {std::string(kO200kPattern)};
  if (name == "gpt2" || name == "gpt-2") return {std::string(kGpt2Pattern)};
  fail("unknown pre-tokenizer '{}' (known: qwen2, llama3 or llama-bpe, deepseek-v3, tekken, gpt-4o, gpt2 or gpt-2)",
       name);
}

std::string PreTokenizer::name_of(const std::vector<std::string>& patterns) {
  for (const char* name : {"qwen2", "llama3", "deepseek-v3", "tekken", "gpt-4o", "gpt2"}) {
    if (patterns_for(name) == patterns) return name;
  }
  return "";
}

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& pieces) const {
  MatchScratch& scratch = match_scratch();
  check(scratch.match_data != nullptr, "pre-tokenizer: out of memory for PCRE2 match data");

  std::vector<std::string_view> current{text};
  std::vector<std::string_view> next;
  for (size_t k = 0; k < compiled_.size(); ++k) {
    const bool last = k + 1 == compiled_.size();
    std::vector<std::string_view>& out = last ? pieces : next;
    for (std::string_view piece : current) {
      const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
      size_t gap_start = 0;
      size_t offset = 0;
      while (offset < piece.size()) {
        const int rc = pcre2_match(compiled_[k]->code, subject, piece.size(), offset, 0, scratch.match_data,
                                   scratch.match_context);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        check(rc >= 0, "pre-tokenizer: PCRE2 match failed with code {}", rc);
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(scratch.match_data);
        const size_t begin = ovector[0];
        const size_t end = ovector[1];
        if (end == begin) {
          if (begin >= piece.size()) break;  // an empty match: step over one character (it stays inside the gap)
          offset = begin + utf8::decode_char(piece, begin).num_bytes;
          continue;
        }
        if (begin > gap_start) out.push_back(piece.substr(gap_start, begin - gap_start));
        out.push_back(piece.substr(begin, end - begin));
        gap_start = offset = end;
      }
      if (gap_start < piece.size()) out.push_back(piece.substr(gap_start));
    }
    if (!last) {
      current.swap(next);
      next.clear();
    }
  }
}

}  // namespace llmesh::text
