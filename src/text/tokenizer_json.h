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

#include <string>

#include "text/bpe_vocab.h"

namespace llmesh {

BpeVocab read_hf_tokenizer_json(const std::string& path);

}  // namespace llmesh
