// The pre-tokenizer: splits text into the pieces ("words") that BPE encodes
// one at a time, with PCRE2 regexes.
//
// Each pattern works like HF tokenizers' `Split(pattern, behavior=Isolated)`:
// every match becomes a piece and so does every non-empty gap between matches.
// Several patterns apply in sequence, each to every piece of the previous one
// (DeepSeek-V3 uses three). Concatenating the pieces always gives back the text.
//
// Regex dialect: HF tokenizers compiles these patterns with Oniguruma; PCRE2
// with UTF+UCP agrees except that PCRE2 10.42's `\s` lacks U+0085 (NEL), which
// Oniguruma's Unicode White_Space includes, so `\s`/`\S` are widened on load.
//
// Invalid UTF-8: compiled with PCRE2_MATCH_INVALID_UTF, so invalid bytes never
// match anything; they end up in gap pieces of their own and BPE encodes them
// as raw bytes (encode->decode stays lossless).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace llmesh::text {

class PreTokenizer {
 public:
  explicit PreTokenizer(std::vector<std::string> patterns);
  ~PreTokenizer();
  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;

  // The patterns of a pre-tokenizer llmesh knows by name: "qwen2", "llama3"
  // (GGUF: "llama-bpe"), "deepseek-v3", "tekken" (Mistral), "gpt2" (GGUF: "gpt-2"). Error for any other name.
  static std::vector<std::string> patterns_for(std::string_view name);
  // The name whose patterns equal `patterns`, or "" when none does.
  static std::string name_of(const std::vector<std::string>& patterns);

  // Appends the pieces of `text` to `pieces` (views into `text`). Thread-safe.
  void split(std::string_view text, std::vector<std::string_view>& pieces) const;

  const std::vector<std::string>& patterns() const { return patterns_; }

 private:
  struct Compiled;
  std::vector<std::string> patterns_;
  std::vector<std::unique_ptr<Compiled>> compiled_;
};

}  // namespace llmesh::text
