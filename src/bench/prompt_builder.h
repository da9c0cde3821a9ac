// Prompt text of an exact number of tokens under the server's tokenizer.
//
// Built from the vocabulary: a pool of whole-word tokens (" river", "river")
// that each encode to exactly one token on their own; a text "w0 w1 w2 ..."
// then splits into one pre-token per word under GPT-style pre-tokenizers, so
// its length is the number of words. With a corpus, a window of the corpus
// (its position picked by the seed) is decoded and trimmed or padded until it
// re-encodes to the wanted count. Every text is checked with encode().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "text/tokenizer.h"

namespace llmesh::bench {

// A tokenizer from a tokenizer.json, a folder holding one, or a model (.gguf
// or Hugging Face folder). Throws Error naming the path.
std::shared_ptr<const text::Tokenizer> load_tokenizer(const std::string& path);

class PromptBuilder {
 public:
  // `corpus_text` empty: text built from the vocabulary.
  PromptBuilder(std::shared_ptr<const text::Tokenizer> tokenizer, std::string corpus_text = "");

  // Text that encodes to exactly `num_tokens` tokens (>= 1). Different seeds
  // give different texts from the first token on (so prompts share no prefix).
  std::string text_of_tokens(int64_t num_tokens, uint64_t seed) const;

  int64_t count_tokens(std::string_view text) const;
  const text::Tokenizer& tokenizer() const { return *tokenizer_; }
  size_t num_pool_words() const { return spaced_words_.size(); }

 private:
  std::string words_text(int64_t num_words, uint64_t seed, bool leading_word_bare) const;
  std::string corpus_text_of_tokens(int64_t num_tokens, uint64_t seed) const;

  std::shared_ptr<const text::Tokenizer> tokenizer_;
  std::vector<std::string> spaced_words_;  // " word": one token each
  std::vector<std::string> bare_words_;    // "word": one token each (may start a text)
  std::vector<int32_t> corpus_ids_;        // the corpus, encoded once
};

}  // namespace llmesh::bench
