// GGUF metadata and tensors -> llmesh's model description (config, tokenizer
// data, canonical weight views). Key names follow llama.cpp's conventions
// (ARCH.embedding_length, tokenizer.ggml.tokens, ...).
#pragma once

#include <string>

#include "model/gguf.h"
#include "model/model_files.h"

namespace llmesh {

// The architectures llmesh runs, by `general.architecture`.
bool is_supported_gguf_arch(const std::string& arch);

// ModelConfig from ARCH.* keys plus the tensors that signal options
// (no output.weight -> tied embeddings, blk.0.attn_q.bias -> attention bias, ...).
ModelConfig read_gguf_config(const GgufFile& gguf);

// Tokenizer data from tokenizer.ggml.* (byte-level BPE only: tokenizer.ggml.model "gpt2").
BpeVocab read_gguf_vocab(const GgufFile& gguf);

// Registers the file's tensors in `weights`: every tensor under its own name,
// and each stacked expert tensor blk.N.ffn_X_exps.weight {experts, out, in}
// also as per-expert 2-D views blk.N.ffn_X_exps.E.weight.
void add_gguf_weights(const GgufFile& gguf, WeightStore& weights);

// Everything open_model returns, from a parsed GGUF file; checks the weights
// against the config. `path` is what the user passed.
ModelFiles model_from_gguf(const GgufFile& gguf, const std::string& path);

}  // namespace llmesh
