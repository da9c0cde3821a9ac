// GGUF tokenizer metadata (llama.cpp's tokenizer.ggml.* keys and
// tokenizer.chat_template) -> the tokenizer's data. Reads metadata only: the
// container's tensors are the model layer's (model/gguf_config.h).
#pragma once

#include "format/gguf.h"
#include "text/bpe_vocab.h"
#include "text/tokenizer_files.h"

namespace llmesh::text {

// Tokenizer data from tokenizer.ggml.* (byte-level BPE only: tokenizer.ggml.model "gpt2").
BpeVocab read_gguf_vocab(const format::GgufFile& gguf);

// The vocabulary plus tokenizer.chat_template, the BOS/EOS token strings and the ids that end
// generation (eos, eot, eom and the well-known end-of-turn control tokens).
TokenizerFiles tokenizer_from_gguf(const format::GgufFile& gguf);

}  // namespace llmesh::text
