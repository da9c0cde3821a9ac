// A small hand-made byte-level vocabulary for tests that need exact control of
// merges and added tokens.
#pragma once

#include <string>

#include "text/bpe_vocab.h"
#include "text/byte_level.h"

namespace llmesh::test {

// ids 0..255: the single bytes (byte-level form, id = byte value); then merges
// (rank order): "b c" -> bc, "a b" -> ab, "ab c" -> abc, "a a" -> aa, "Ġ a" -> Ġa;
// then added tokens: <|x|> (special), <|x|>y (not special), <think> (not special).
inline text::BpeVocab make_toy_vocab() {
  text::BpeVocab vocab;
  for (int b = 0; b < 256; ++b) vocab.tokens.push_back(text::byte_level::encode(std::string(1, static_cast<char>(b))));
  const std::pair<std::string, std::string> merges[] = {{"b", "c"}, {"a", "b"}, {"ab", "c"}, {"a", "a"}, {"Ġ", "a"}};
  for (const auto& [left, right] : merges) {
    vocab.merges.emplace_back(left, right);
    vocab.tokens.push_back(left + right);  // ids 256..260
  }
  const std::pair<std::string, bool> added[] = {{"<|x|>", true}, {"<|x|>y", false}, {"<think>", false}};
  for (const auto& [content, special] : added) {
    vocab.added_tokens.push_back({static_cast<int32_t>(vocab.tokens.size()), content, special});
    vocab.tokens.push_back(content);  // ids 261..263
  }
  vocab.pre_tokenizer = "gpt2";
  vocab.bos_token_id = 261;
  vocab.eos_token_id = 261;
  return vocab;
}

inline constexpr int32_t kToyBc = 256, kToyAb = 257, kToyAbc = 258, kToyAa = 259, kToySpaceA = 260;
inline constexpr int32_t kToySpecialX = 261, kToyXy = 262, kToyThink = 263;

}  // namespace llmesh::test
