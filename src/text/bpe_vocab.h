// The data a byte-level BPE tokenizer is built from, independent of the file
// it came from (HF tokenizer.json or GGUF `tokenizer.ggml.*` metadata).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace llmesh::text {

struct AddedToken {
  int32_t id = 0;
  std::string content;
  bool special = true;  // control tokens: matched in text when parse_special, skipped by decode(skip_special)
};

struct BpeVocab {
  // tokens[id] = the token in byte-level form (GPT-2 byte-to-unicode mapping), as stored in the file.
  std::vector<std::string> tokens;
  // Merge rules in priority order (rank = index): the two byte-level symbols to join.
  std::vector<std::pair<std::string, std::string>> merges;
  // Tokens matched verbatim before BPE (special/control and user-defined tokens).
  std::vector<AddedToken> added_tokens;
  // Pre-tokenizer: a name llmesh knows ("qwen2", "llama3", "deepseek-v3", "gpt2")
  // or, for tokenizer.json, the regex patterns read from the file.
  std::string pre_tokenizer;
  std::vector<std::string> pre_tokenizer_regexes;
  // Unicode NFC applied to text before pre-tokenization (HF "normalizer": NFC, as in
  // Qwen2/Qwen3's tokenizer.json). The Tokenizer also turns it on by itself for
  // pre_tokenizer "qwen2" without regexes (a GGUF vocabulary, which stores no normalizer).
  bool normalize_nfc = false;
  bool ignore_merges = false;  // a word that is itself a token is not split (Llama 3; implied by "llama3" without regexes)
  int32_t bos_token_id = -1;
  int32_t eos_token_id = -1;
  bool add_bos_token = false;
};

}  // namespace llmesh::text
