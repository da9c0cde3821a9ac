// Reads a Hugging Face tokenizer.json (byte-level BPE) into a BpeVocab.
//
// Supported: model.type "BPE" (merges as "a b" strings or [a, b] pairs,
// ignore_merges), added_tokens, normalizer null / NFC / an empty Sequence,
// pre_tokenizer Sequence[Split(Regex, Isolated)..., ByteLevel(use_regex false)]
// or a lone ByteLevel (use_regex true means GPT-2's regex), decoder ByteLevel,
// post_processor TemplateProcessing that starts with a special token (recorded
// as add_bos_token). Anything else is rejected with an Error naming the file.
//
// BOS/EOS come from tokenizer_config.json in the same folder when it exists
// (bos_token, eos_token, add_bos_token, as transformers reads them).
#pragma once

#include <cstdint>
#include <string>

#include "text/bpe_vocab.h"

namespace llmesh::text {

BpeVocab read_hf_tokenizer_json(const std::string& path);

// The id of a token string as tokenizer_config.json names it: added tokens first, as
// transformers does, then the vocabulary; -1 when absent or empty.
int32_t find_token_id(const BpeVocab& vocab, const std::string& token);

}  // namespace llmesh::text
