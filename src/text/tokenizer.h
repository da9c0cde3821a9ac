// Byte-level BPE tokenizer (GPT-2 family: Qwen2/Qwen3, Llama 3, DeepSeek-V3).
//
// Built only from a BpeVocab, so a vocabulary read from tokenizer.json and one
// read from GGUF metadata behave identically. encode():
//   1. added tokens are split out first, leftmost-longest match (with
//      parse_special=false only the non-special ones, e.g. Qwen's <think>;
//      special tokens are then ordinary text);
//   2. each remaining segment is NFC-normalized when the vocab asks for it,
//      split by the pre-tokenizer regexes, mapped to byte-level symbols and
//      merged by merge rank (lowest rank first, leftmost on ties), like HF
//      tokenizers' BPE model; with ignore_merges a piece that is itself a token
//      is emitted whole.
// Invalid UTF-8 in the input is kept: such bytes become pieces of their own and
// encode as their single-byte tokens, so decode(encode(s)) == s for any bytes.
// Thread-safe: encode/decode may run concurrently (the word cache is locked).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "text/bpe_vocab.h"
#include "text/pretokenizer.h"

namespace llmesh::text {

class Tokenizer {
 public:
  explicit Tokenizer(BpeVocab vocab);  // Error on inconsistent data
  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  // Token ids of `text`; never adds BOS (see add_bos_token()).
  std::vector<int32_t> encode(std::string_view text, bool parse_special = true) const;
  // The bytes the ids stand for, concatenated (may be invalid UTF-8 when the ids
  // cut a character). Ids outside the vocabulary contribute nothing.
  std::string decode(std::span<const int32_t> ids, bool skip_special = false) const;

  std::string token_bytes(int32_t id) const;   // Error when id is out of range
  std::string token_string(int32_t id) const;  // as stored in the vocab (byte-level form)
  std::optional<int32_t> token_id(std::string_view token_string) const;

  int32_t vocab_size() const { return static_cast<int32_t>(token_strings_.size()); }
  bool is_special(int32_t id) const;  // a special (control) added token
  bool is_added(int32_t id) const;    // any added token, special or not
  int32_t bos_token_id() const { return bos_token_id_; }
  int32_t eos_token_id() const { return eos_token_id_; }
  bool add_bos_token() const { return add_bos_token_; }
  const PreTokenizer& pre_tokenizer() const { return pre_tokenizer_; }
  const std::string& pre_tokenizer_name() const { return pre_tokenizer_name_; }
  bool normalizes_nfc() const { return normalize_nfc_; }

 private:
  struct TokenIndex;
  struct MergeTable;
  struct AddedTokenTrie;
  struct WordCache;

  void encode_segment(std::string_view segment, std::vector<int32_t>& ids) const;
  void encode_piece(std::string_view piece, std::vector<int32_t>& ids) const;
  void merge_small(std::vector<int32_t>& symbols) const;
  void merge_large(std::vector<int32_t>& symbols) const;

  std::vector<std::string> token_strings_;  // [vocab_size] byte-level form
  std::vector<std::string> token_bytes_;    // [vocab_size] raw bytes
  std::vector<uint8_t> added_kind_;         // [vocab_size] 0 = normal, 1 = added, 2 = added special
  std::unique_ptr<TokenIndex> id_of_token_string_;  // over token_strings_
  std::unique_ptr<TokenIndex> id_of_bytes_;         // over token_bytes_, normal tokens only (ignore_merges)
  int32_t byte_token_id_[256];                            // the single-byte token of each byte
  std::unique_ptr<MergeTable> merges_;
  std::unique_ptr<AddedTokenTrie> added_trie_;
  std::unique_ptr<WordCache> cache_;
  PreTokenizer pre_tokenizer_;
  std::string pre_tokenizer_name_;
  bool normalize_nfc_ = false;
  bool ignore_merges_ = false;
  int32_t bos_token_id_ = -1;
  int32_t eos_token_id_ = -1;
  bool add_bos_token_ = false;
};

}  // namespace llmesh::text
