// GGUF metadata and tensors -> llmesh's model description (config, canonical
// weight views, sampling defaults). Key names follow llama.cpp's conventions
// (ARCH.embedding_length, general.sampling.temp, ...). The tokenizer.* keys are
// the text layer's (text/gguf_tokenizer.h).
#pragma once

#include <string>

#include "format/gguf.h"
#include "model/model_files.h"

namespace llmesh::model {

// The architectures llmesh runs, by `general.architecture`.
bool is_supported_gguf_arch(const std::string& arch);

// ModelConfig from ARCH.* keys plus the tensors that signal options
// (no output.weight -> tied embeddings, blk.0.attn_q.bias -> attention bias, ...).
ModelConfig read_gguf_config(const format::GgufFile& gguf);

// Registers the file's tensors in `weights`: every tensor under its own name,
// and each stacked expert tensor blk.N.ffn_X_exps.weight {experts, out, in}
// also as per-expert 2-D views blk.N.ffn_X_exps.E.weight. glm4moe's
// blk.N.post_attention_norm.weight is registered as blk.N.ffn_norm.weight. With
// num_layers >= 0, the tensors of blocks N >= num_layers (glm4moe's
// multi-token-prediction layers) are left out (still counted as file tensors).
void add_gguf_weights(const format::GgufFile& gguf, WeightStore& weights, int64_t num_layers = -1);

// What open_model returns for a GGUF file (but `gguf`, left null), from a parsed
// file; checks the weights against the config. `path` is what the user passed.
ModelFiles model_from_gguf(const format::GgufFile& gguf, const std::string& path);

}  // namespace llmesh::model
